"""Concurrency slots become leases that record their work: work whose process died is found by the
lease running out, and settled from the charge and request id the slot names.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Slots of an earlier run: recovery at the next start frees them anyway, and the new columns
    # have no value to give them.
    op.execute(sa.text("DELETE FROM running_slots"))
    with op.batch_alter_table('running_slots', schema=None) as batch_op:
        batch_op.add_column(sa.Column('expires_at', sa.DateTime(), nullable=False))
        batch_op.add_column(sa.Column('charge_id', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('request_id', sa.String(length=64), nullable=True))
        batch_op.create_index(batch_op.f('ix_running_slots_expires_at'), ['expires_at'], unique=False)
        batch_op.create_foreign_key(batch_op.f('fk_running_slots_charge_id_charges'), 'charges', ['charge_id'],
                                    ['charge_id'])
    with op.batch_alter_table('images', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_images_charge_id'), ['charge_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('images', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_images_charge_id'))
    with op.batch_alter_table('running_slots', schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f('fk_running_slots_charge_id_charges'), type_='foreignkey')
        batch_op.drop_index(batch_op.f('ix_running_slots_expires_at'))
        batch_op.drop_column('request_id')
        batch_op.drop_column('charge_id')
        batch_op.drop_column('expires_at')
