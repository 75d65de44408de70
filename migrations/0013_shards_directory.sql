CREATE TABLE `session_routes` (
	`session_id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`network` text NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
-- Sessions that exist already (a deployment from before shards) get their routes.
INSERT INTO `session_routes` (`session_id`, `account_id`, `network`, `created_at`) SELECT `id`, `account_id`, `network`, `created_at` FROM `messaging_sessions`;--> statement-breakpoint
-- The messaging and events tables of migrations 0000-0009 stay here, no longer used: an existing
-- deployment copies them into shard 0 first and drops them after (README, "Upgrading to shards").
ALTER TABLE `accounts` ADD `shard` integer DEFAULT 0 NOT NULL;