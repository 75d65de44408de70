CREATE TABLE `contacts` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`phone` text NOT NULL,
	`name` text,
	`email` text,
	`tags` text DEFAULT '[]' NOT NULL,
	`attributes` text DEFAULT '{}' NOT NULL,
	`opted_out` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `contacts_account_phone_idx` ON `contacts` (`account_id`,`phone`);--> statement-breakpoint
CREATE INDEX `contacts_account_idx` ON `contacts` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `message_batches` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`session_id` text NOT NULL,
	`total` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `message_batches_account_idx` ON `message_batches` (`account_id`,`id`);--> statement-breakpoint
CREATE TABLE `messages` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`session_id` text NOT NULL,
	`chat_id` text NOT NULL,
	`direction` text NOT NULL,
	`type` text NOT NULL,
	`text` text,
	`template` text,
	`media` text,
	`status` text NOT NULL,
	`error_code` text,
	`error_message` text,
	`external_id` text,
	`reply_to` text,
	`batch_id` text,
	`campaign_id` text,
	`created_at` integer NOT NULL,
	`sent_at` integer,
	`delivered_at` integer,
	`read_at` integer
);
--> statement-breakpoint
CREATE INDEX `messages_chat_idx` ON `messages` (`account_id`,`chat_id`,`id`);--> statement-breakpoint
CREATE INDEX `messages_session_chat_idx` ON `messages` (`account_id`,`session_id`,`chat_id`,`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `messages_external_idx` ON `messages` (`session_id`,`external_id`);--> statement-breakpoint
CREATE INDEX `messages_session_status_idx` ON `messages` (`session_id`,`status`,`sent_at`);--> statement-breakpoint
CREATE INDEX `messages_batch_idx` ON `messages` (`batch_id`,`status`);--> statement-breakpoint
CREATE INDEX `messages_campaign_idx` ON `messages` (`campaign_id`,`status`);--> statement-breakpoint
CREATE TABLE `messaging_sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`network` text NOT NULL,
	`status` text NOT NULL,
	`status_reason` text,
	`phone_number` text,
	`credentials_set` integer DEFAULT false NOT NULL,
	`send_rate_per_minute` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `msg_sessions_account_idx` ON `messaging_sessions` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `msg_sessions_phone_idx` ON `messaging_sessions` (`account_id`,`phone_number`);