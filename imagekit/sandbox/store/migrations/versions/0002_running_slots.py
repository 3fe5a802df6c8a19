"""Running operations and peaks in the database: several workers count one user's operations together.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('running_slots',
    sa.Column('slot_id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('started_at', sa.DateTime(), nullable=False),
    sa.Column('pid', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.user_id'], ),
    sa.PrimaryKeyConstraint('slot_id')
    )
    with op.batch_alter_table('running_slots', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_running_slots_user_id'), ['user_id'], unique=False)
    op.create_table('concurrency_peaks',
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('peak', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.user_id'], ),
    sa.PrimaryKeyConstraint('user_id')
    )


def downgrade() -> None:
    op.drop_table('concurrency_peaks')
    with op.batch_alter_table('running_slots', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_running_slots_user_id'))

    op.drop_table('running_slots')
