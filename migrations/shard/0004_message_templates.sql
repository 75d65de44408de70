CREATE TABLE `message_templates` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`session_id` text NOT NULL,
	`name` text NOT NULL,
	`language` text NOT NULL,
	`external_id` text,
	`status` text NOT NULL,
	`category` text NOT NULL,
	`components` text DEFAULT '[]' NOT NULL,
	`quality` text,
	`rejected_reason` text,
	`synced_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `message_templates_session_name_lang` ON `message_templates` (`session_id`,`name`,`language`);--> statement-breakpoint
CREATE INDEX `message_templates_account_idx` ON `message_templates` (`account_id`,`session_id`,`name`);