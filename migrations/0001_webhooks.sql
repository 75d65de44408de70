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
CREATE INDEX `webhooks_account_idx` ON `webhooks` (`account_id`,`enabled`);