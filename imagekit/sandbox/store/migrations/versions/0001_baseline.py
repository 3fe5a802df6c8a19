"""baseline: the tables every sandbox had before migrations

Revision ID: 0001
Revises: (none)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('download_logs',
    sa.Column('download_id', sa.Integer(), nullable=False),
    sa.Column('image_id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.PrimaryKeyConstraint('download_id')
    )
    with op.batch_alter_table('download_logs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_download_logs_image_id'), ['image_id'], unique=False)

    op.create_table('models',
    sa.Column('model_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=16), nullable=False),
    sa.Column('version', sa.String(length=32), nullable=False),
    sa.Column('api_name', sa.String(length=64), nullable=False),
    sa.Column('engine', sa.String(length=32), nullable=False),
    sa.Column('is_main_generation', sa.Boolean(), nullable=False),
    sa.Column('backup_model_id', sa.Integer(), nullable=False),
    sa.Column('params', sa.JSON(), nullable=False),
    sa.Column('prompt', sa.Text(), nullable=False),
    sa.Column('name_global', sa.JSON(), nullable=False),
    sa.Column('description_global', sa.JSON(), nullable=False),
    sa.PrimaryKeyConstraint('model_id')
    )
    op.create_table('plans',
    sa.Column('plan_id', sa.Integer(), nullable=False),
    sa.Column('grade', sa.String(length=32), nullable=False),
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('title', sa.JSON(), nullable=False),
    sa.Column('period', sa.String(length=8), nullable=False),
    sa.Column('one_time_payment', sa.Boolean(), nullable=False),
    sa.Column('enabled', sa.Boolean(), nullable=False),
    sa.Column('premium_available', sa.Boolean(), nullable=False),
    sa.Column('history_period_month', sa.Integer(), nullable=False),
    sa.Column('minus_credit_allowed', sa.Integer(), nullable=False),
    sa.Column('max_style_number', sa.Integer(), nullable=False),
    sa.Column('simultaneous_limit', sa.Integer(), nullable=False),
    sa.Column('max_multi_select', sa.Integer(), nullable=False),
    sa.Column('max_edit_number', sa.Integer(), nullable=False),
    sa.Column('max_prompt_number', sa.Integer(), nullable=False),
    sa.Column('default_credit', sa.Integer(), nullable=False),
    sa.Column('daily_credit', sa.Integer(), nullable=False),
    sa.Column('monthly_credit', sa.Integer(), nullable=False),
    sa.Column('max_credit', sa.Integer(), nullable=False),
    sa.Column('price_global', sa.JSON(), nullable=False),
    sa.Column('upgrade_plan_id', sa.Integer(), nullable=True),
    sa.PrimaryKeyConstraint('plan_id'),
    sa.UniqueConstraint('grade')
    )
    op.create_table('request_ids',
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('request_id', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('state', sa.String(length=12), nullable=False),
    sa.PrimaryKeyConstraint('user_id', 'request_id')
    )
    with op.batch_alter_table('request_ids', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_request_ids_created_at'), ['created_at'], unique=False)

    op.create_table('sandbox_state',
    sa.Column('key', sa.String(length=32), nullable=False),
    sa.Column('value', sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint('key')
    )
    op.create_table('credit_costs',
    sa.Column('credit_cost_info_id', sa.Integer(), nullable=False),
    sa.Column('plan_id', sa.Integer(), nullable=False),
    sa.Column('upgrade_plan_id', sa.Integer(), nullable=False),
    sa.Column('type', sa.String(length=32), nullable=False),
    sa.Column('credit', sa.Integer(), nullable=False),
    sa.Column('watermarked', sa.Boolean(), nullable=False),
    sa.Column('need_upgrade', sa.Boolean(), nullable=False),
    sa.Column('featured', sa.Boolean(), nullable=False),
    sa.ForeignKeyConstraint(['plan_id'], ['plans.plan_id'], ),
    sa.PrimaryKeyConstraint('credit_cost_info_id')
    )
    op.create_table('plan_models',
    sa.Column('plan_id', sa.Integer(), nullable=False),
    sa.Column('model_id', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['model_id'], ['models.model_id'], ),
    sa.ForeignKeyConstraint(['plan_id'], ['plans.plan_id'], ),
    sa.PrimaryKeyConstraint('plan_id', 'model_id')
    )
    op.create_table('users',
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('email', sa.String(length=254), nullable=False),
    sa.Column('name', sa.String(length=128), nullable=False),
    sa.Column('occupation', sa.String(length=64), nullable=False),
    sa.Column('business', sa.String(length=64), nullable=False),
    sa.Column('role', sa.String(length=16), nullable=False),
    sa.Column('customer_key', sa.String(length=36), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('plan_id', sa.Integer(), nullable=False),
    sa.Column('plan_started_at', sa.DateTime(), nullable=False),
    sa.Column('next_plan_id', sa.Integer(), nullable=True),
    sa.Column('default_credit', sa.Integer(), nullable=False),
    sa.Column('daily_credit', sa.Integer(), nullable=False),
    sa.Column('monthly_credit', sa.Integer(), nullable=False),
    sa.Column('max_credit', sa.Integer(), nullable=False),
    sa.Column('postpaid_usage', sa.Integer(), nullable=False),
    sa.Column('daily_granted_on', sa.Date(), nullable=False),
    sa.Column('monthly_granted_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['plan_id'], ['plans.plan_id'], ),
    sa.PrimaryKeyConstraint('user_id'),
    sa.UniqueConstraint('email')
    )
    op.create_table('api_keys',
    sa.Column('key_id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('prefix', sa.String(length=16), nullable=False),
    sa.Column('key_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('expires_at', sa.DateTime(), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.user_id'], ),
    sa.PrimaryKeyConstraint('key_id'),
    sa.UniqueConstraint('prefix')
    )
    op.create_table('charges',
    sa.Column('charge_id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('operation', sa.String(length=24), nullable=False),
    sa.Column('credits', sa.Integer(), nullable=False),
    sa.Column('refunded', sa.Integer(), nullable=False),
    sa.Column('from_daily', sa.Integer(), nullable=False),
    sa.Column('from_monthly', sa.Integer(), nullable=False),
    sa.Column('from_default', sa.Integer(), nullable=False),
    sa.Column('postpaid', sa.Integer(), nullable=False),
    sa.Column('status', sa.String(length=12), nullable=False),
    sa.Column('request_id', sa.String(length=64), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.user_id'], ),
    sa.PrimaryKeyConstraint('charge_id')
    )
    with op.batch_alter_table('charges', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_charges_created_at'), ['created_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_charges_user_id'), ['user_id'], unique=False)

    op.create_table('collections',
    sa.Column('collection_id', sa.Integer(), nullable=False),
    sa.Column('owner_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('name', sa.String(length=64), nullable=False),
    sa.Column('look', sa.String(length=32), nullable=False),
    sa.Column('palette', sa.JSON(), nullable=False),
    sa.Column('premium', sa.Boolean(), nullable=False),
    sa.Column('tags_en', sa.JSON(), nullable=False),
    sa.Column('tags_ko', sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(['owner_id'], ['users.user_id'], ),
    sa.PrimaryKeyConstraint('collection_id')
    )
    op.create_table('enterprise_downloads',
    sa.Column('enterprise_download_id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('scale_size', sa.String(length=2), nullable=False),
    sa.Column('credit', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.user_id'], ),
    sa.PrimaryKeyConstraint('enterprise_download_id')
    )
    op.create_table('enterprises',
    sa.Column('enterprise_id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=128), nullable=False),
    sa.Column('categories', sa.String(length=256), nullable=False),
    sa.Column('expires_at', sa.DateTime(), nullable=False),
    sa.Column('monthly_credit', sa.Integer(), nullable=False),
    sa.Column('yearly_credit', sa.Integer(), nullable=False),
    sa.Column('amount', sa.Integer(), nullable=False),
    sa.Column('currency', sa.String(length=3), nullable=False),
    sa.Column('simultaneous_limit', sa.Integer(), nullable=False),
    sa.Column('max_edit_number', sa.Integer(), nullable=False),
    sa.Column('edit_count_period', sa.String(length=8), nullable=False),
    sa.Column('payment_period', sa.String(length=8), nullable=False),
    sa.Column('postpaid', sa.Boolean(), nullable=False),
    sa.Column('model_url', sa.String(length=256), nullable=False),
    sa.Column('logo', sa.String(length=256), nullable=False),
    sa.Column('can_use_own_only', sa.Boolean(), nullable=False),
    sa.Column('has_special_limits', sa.Boolean(), nullable=False),
    sa.Column('special_limits', sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.user_id'], ),
    sa.PrimaryKeyConstraint('enterprise_id'),
    sa.UniqueConstraint('user_id')
    )
    op.create_table('login_sessions',
    sa.Column('sid_hash', sa.String(length=64), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('expires_at', sa.DateTime(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.user_id'], ),
    sa.PrimaryKeyConstraint('sid_hash')
    )
    op.create_table('prompt_logs',
    sa.Column('ttp_log_id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('style_id', sa.Integer(), nullable=True),
    sa.Column('initial_prompt', sa.Text(), nullable=False),
    sa.Column('enhanced_prompt', sa.Text(), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.user_id'], ),
    sa.PrimaryKeyConstraint('ttp_log_id')
    )
    with op.batch_alter_table('prompt_logs', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_prompt_logs_user_id'), ['user_id'], unique=False)

    op.create_table('styles',
    sa.Column('style_id', sa.Integer(), nullable=False),
    sa.Column('owner_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('super', sa.String(length=32), nullable=False),
    sa.Column('main', sa.String(length=32), nullable=False),
    sa.Column('main_text', sa.String(length=64), nullable=False),
    sa.Column('look', sa.String(length=32), nullable=False),
    sa.Column('api_enabled', sa.Boolean(), nullable=False),
    sa.Column('credit_cost', sa.Integer(), nullable=False),
    sa.Column('thumb_image_id', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['owner_id'], ['users.user_id'], ),
    sa.PrimaryKeyConstraint('style_id')
    )
    op.create_table('enterprise_models',
    sa.Column('enterprise_id', sa.Integer(), nullable=False),
    sa.Column('model_id', sa.Integer(), nullable=False),
    sa.ForeignKeyConstraint(['enterprise_id'], ['enterprises.enterprise_id'], ),
    sa.ForeignKeyConstraint(['model_id'], ['models.model_id'], ),
    sa.PrimaryKeyConstraint('enterprise_id', 'model_id')
    )
    op.create_table('images',
    sa.Column('image_id', sa.Integer(), nullable=False),
    sa.Column('owner_id', sa.Integer(), nullable=True),
    sa.Column('created_at', sa.DateTime(), nullable=False),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('error', sa.Text(), nullable=False),
    sa.Column('width', sa.Integer(), nullable=False),
    sa.Column('height', sa.Integer(), nullable=False),
    sa.Column('file_name', sa.String(length=64), nullable=True),
    sa.Column('vector_file', sa.String(length=64), nullable=True),
    sa.Column('kind', sa.String(length=12), nullable=False),
    sa.Column('mode', sa.String(length=16), nullable=False),
    sa.Column('prompt', sa.Text(), nullable=False),
    sa.Column('negative', sa.Text(), nullable=False),
    sa.Column('style_id', sa.Integer(), nullable=True),
    sa.Column('collection_id', sa.Integer(), nullable=True),
    sa.Column('member_of', sa.Integer(), nullable=True),
    sa.Column('group_id', sa.String(length=64), nullable=False),
    sa.Column('variation_id', sa.Integer(), nullable=False),
    sa.Column('credit_cost', sa.Integer(), nullable=False),
    sa.Column('platform', sa.String(length=8), nullable=False),
    sa.Column('api_type', sa.String(length=16), nullable=False),
    sa.Column('model_id', sa.Integer(), nullable=True),
    sa.Column('source_id', sa.Integer(), nullable=True),
    sa.Column('scale_size', sa.String(length=3), nullable=False),
    sa.Column('request_id', sa.String(length=64), nullable=False),
    sa.Column('charge_id', sa.Integer(), nullable=True),
    sa.Column('unit_price', sa.Integer(), nullable=False),
    sa.Column('watermarked', sa.Boolean(), nullable=False),
    sa.Column('bookmarked', sa.Boolean(), nullable=False),
    sa.Column('blur_reason', sa.String(length=64), nullable=False),
    sa.Column('meta', sa.JSON(), nullable=False),
    sa.ForeignKeyConstraint(['charge_id'], ['charges.charge_id'], ),
    sa.ForeignKeyConstraint(['member_of'], ['collections.collection_id'], ),
    sa.ForeignKeyConstraint(['owner_id'], ['users.user_id'], ),
    sa.PrimaryKeyConstraint('image_id')
    )
    with op.batch_alter_table('images', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_images_owner_id'), ['owner_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_images_source_id'), ['source_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('images', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_images_source_id'))
        batch_op.drop_index(batch_op.f('ix_images_owner_id'))

    op.drop_table('images')
    op.drop_table('enterprise_models')
    op.drop_table('styles')
    with op.batch_alter_table('prompt_logs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_prompt_logs_user_id'))

    op.drop_table('prompt_logs')
    op.drop_table('login_sessions')
    op.drop_table('enterprises')
    op.drop_table('enterprise_downloads')
    op.drop_table('collections')
    with op.batch_alter_table('charges', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_charges_user_id'))
        batch_op.drop_index(batch_op.f('ix_charges_created_at'))

    op.drop_table('charges')
    op.drop_table('api_keys')
    op.drop_table('users')
    op.drop_table('plan_models')
    op.drop_table('credit_costs')
    op.drop_table('sandbox_state')
    with op.batch_alter_table('request_ids', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_request_ids_created_at'))

    op.drop_table('request_ids')
    op.drop_table('plans')
    op.drop_table('models')
    with op.batch_alter_table('download_logs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_download_logs_image_id'))

    op.drop_table('download_logs')
