-- Every shard database (SHARD_<n>): the messaging and events tables as migrations 0000-0009 of the
-- directory left them, created at once (README, "Upgrading to shards", for a deployment that had them in DB).
CREATE TABLE `chats` (
	`account_id` text NOT NULL,
	`session_id` text NOT NULL,
	`chat_id` text NOT NULL,
	`last_message_id` text NOT NULL,
	`last_message_at` integer NOT NULL,
	`last_inbound_id` text,
	`last_inbound_at` integer,
	`unread_count` integer DEFAULT 0 NOT NULL,
	`first_unread_id` text,
	`read_at` integer,
	PRIMARY KEY(`session_id`, `chat_id`)
);
--> statement-breakpoint
CREATE INDEX `chats_activity_idx` ON `chats` (`account_id`,`session_id`,`last_message_at`,`chat_id`);--> statement-breakpoint
CREATE TABLE `contacts` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`phone` text NOT NULL,
	`name` text,
	`email` text,
	`tags` text DEFAULT '[]' NOT NULL,
	`attributes` text DEFAULT '{}' NOT NULL,
	`opted_out` integer DEFAULT false NOT NULL,
	`identity` text,
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
	`content` text,
	`reactions` text,
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
CREATE INDEX `messages_pending_media_idx` ON `messages` (`created_at`) WHERE json_extract(media, '$.status') = 'pending';--> statement-breakpoint
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
	`health` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `msg_sessions_account_idx` ON `messaging_sessions` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `msg_sessions_phone_idx` ON `messaging_sessions` (`account_id`,`phone_number`);--> statement-breakpoint
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
CREATE INDEX `campaigns_session_idx` ON `campaigns` (`session_id`,`status`);--> statement-breakpoint
CREATE TABLE `events` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`type` text NOT NULL,
	`session_id` text,
	`payload` text NOT NULL,
	`created_at` integer NOT NULL,
	`fanned_out_at` integer,
	`requeues` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `events_pending_idx` ON `events` (`fanned_out_at`,`created_at`);--> statement-breakpoint
CREATE INDEX `events_account_idx` ON `events` (`account_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `events_account_id_idx` ON `events` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `events_account_type_idx` ON `events` (`account_id`,`type`,`id`);--> statement-breakpoint
CREATE INDEX `events_account_session_idx` ON `events` (`account_id`,`session_id`,`id`);--> statement-breakpoint
CREATE TABLE `webhook_attempts` (
	`id` text PRIMARY KEY NOT NULL,
	`delivery_id` text NOT NULL,
	`account_id` text NOT NULL,
	`attempt` integer NOT NULL,
	`status_code` integer,
	`duration_ms` integer NOT NULL,
	`error` text,
	`response_body` text,
	`next_attempt_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `attempts_delivery_idx` ON `webhook_attempts` (`delivery_id`,`attempt`);--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`webhook_id` text NOT NULL,
	`event_id` text NOT NULL,
	`event_type` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`next_attempt_at` integer,
	`queued_at` integer,
	`lease_until` integer,
	`last_status_code` integer,
	`last_error` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `deliveries_event_webhook_uq` ON `webhook_deliveries` (`event_id`,`webhook_id`);--> statement-breakpoint
CREATE INDEX `deliveries_webhook_idx` ON `webhook_deliveries` (`webhook_id`,`id`);--> statement-breakpoint
CREATE INDEX `deliveries_due_idx` ON `webhook_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `deliveries_webhook_status_idx` ON `webhook_deliveries` (`webhook_id`,`status`,`event_id`);--> statement-breakpoint
CREATE INDEX `deliveries_account_status_event_idx` ON `webhook_deliveries` (`account_id`,`status`,`event_id`);--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`url` text NOT NULL,
	`description` text,
	`events` text NOT NULL,
	`session_id` text,
	`enabled` integer NOT NULL,
	`disabled_reason` text,
	`secret` text NOT NULL,
	`previous_secret` text,
	`previous_secret_expires_at` integer,
	`failing_since` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `webhooks_account_idx` ON `webhooks` (`account_id`,`enabled`);--> statement-breakpoint
-- Chats are kept by the database itself: every insert into messages, whichever module writes it
-- (sends, bulk and campaign fan-out, inbound), updates its chat in the same statement.
CREATE TRIGGER `messages_chat_activity` AFTER INSERT ON `messages` BEGIN
	INSERT INTO `chats` (`account_id`, `session_id`, `chat_id`, `last_message_id`, `last_message_at`, `last_inbound_id`, `last_inbound_at`, `unread_count`, `first_unread_id`)
	VALUES (
		new.`account_id`, new.`session_id`, new.`chat_id`, new.`id`, new.`created_at`,
		CASE WHEN new.`direction` = 'inbound' THEN new.`id` END,
		CASE WHEN new.`direction` = 'inbound' THEN new.`created_at` END,
		CASE WHEN new.`direction` = 'inbound' THEN 1 ELSE 0 END,
		CASE WHEN new.`direction` = 'inbound' THEN new.`id` END
	)
	ON CONFLICT (`session_id`, `chat_id`) DO UPDATE SET
		`last_message_id` = CASE WHEN excluded.`last_message_at` >= `chats`.`last_message_at` THEN excluded.`last_message_id` ELSE `chats`.`last_message_id` END,
		`last_message_at` = max(`chats`.`last_message_at`, excluded.`last_message_at`),
		`last_inbound_id` = CASE WHEN excluded.`last_inbound_at` IS NOT NULL AND excluded.`last_inbound_at` >= coalesce(`chats`.`last_inbound_at`, 0) THEN excluded.`last_inbound_id` ELSE `chats`.`last_inbound_id` END,
		`last_inbound_at` = CASE WHEN excluded.`last_inbound_at` IS NULL THEN `chats`.`last_inbound_at` ELSE max(coalesce(`chats`.`last_inbound_at`, 0), excluded.`last_inbound_at`) END,
		`unread_count` = `chats`.`unread_count` + excluded.`unread_count`,
		`first_unread_id` = coalesce(`chats`.`first_unread_id`, excluded.`first_unread_id`);
END;
