CREATE TABLE `compile_assets` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`sha256` text NOT NULL,
	`size_bytes` integer NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer NOT NULL,
	`stored_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `compile_assets_account_sha_idx` ON `compile_assets` (`account_id`,`sha256`);--> statement-breakpoint
CREATE INDEX `compile_assets_account_idx` ON `compile_assets` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `compile_assets_last_used_idx` ON `compile_assets` (`last_used_at`);--> statement-breakpoint
CREATE INDEX `compile_assets_unstored_idx` ON `compile_assets` (`created_at`) WHERE stored_at IS NULL;