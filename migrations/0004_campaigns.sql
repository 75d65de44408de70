CREATE TABLE `campaign_recipients` (
	`campaign_id` text NOT NULL,
	`seq` integer NOT NULL,
	`account_id` text NOT NULL,
	`contact_id` text NOT NULL,
	`phone` text NOT NULL,
	`name` text,
	`email` text,
	`attributes` text DEFAULT '{}' NOT NULL,
	`status` text NOT NULL,
	`reason` text,
	`message_id` text,
	PRIMARY KEY(`campaign_id`, `seq`)
);
--> statement-breakpoint
CREATE INDEX `campaign_recipients_status_idx` ON `campaign_recipients` (`campaign_id`,`status`,`seq`);--> statement-breakpoint
CREATE TABLE `campaigns` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`session_id` text NOT NULL,
	`name` text NOT NULL,
	`status` text NOT NULL,
	`status_reason` text,
	`message` text NOT NULL,
	`audience` text NOT NULL,
	`scheduled_at` integer,
	`pacing` text,
	`total` integer DEFAULT 0 NOT NULL,
	`skipped` integer DEFAULT 0 NOT NULL,
	`start_token` text,
	`kicked_at` integer,
	`completion_event_id` text,
	`started_at` integer,
	`completed_at` integer,
	`cancelled_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `campaigns_account_idx` ON `campaigns` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `campaigns_account_status_idx` ON `campaigns` (`account_id`,`status`,`id`);--> statement-breakpoint
CREATE INDEX `campaigns_status_idx` ON `campaigns` (`status`,`scheduled_at`);--> statement-breakpoint
CREATE INDEX `campaigns_session_idx` ON `campaigns` (`session_id`,`status`);