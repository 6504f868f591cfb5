//! Room in the pages of `gprs` too: the leader rewrites a waiting GPR's position, promise and
//! estimate whenever the queue ahead of it moves (a new GPR at the top of a queue moves every
//! one behind it), and none of those columns is indexed, so with room in the page PostgreSQL
//! updates the row in place and leaves the table's five indexes alone (a HOT update).

use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        crate::leave_room_for_updates(manager, &["gprs"]).await
    }
}
