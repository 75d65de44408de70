CREATE TABLE `compile_jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`status` text NOT NULL,
	`engine` text NOT NULL,
	`attempt` integer DEFAULT 0 NOT NULL,
	`lease_expires_at` integer,
	`requeue_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	`started_at` integer,
	`completed_at` integer,
	`duration_ms` integer,
	`pages` integer,
	`size_bytes` integer,
	`error` text,
	`callback_url` text,
	`callback_secret` text,
	`callback_status` text,
	`callback_attempts` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `compile_jobs_account_idx` ON `compile_jobs` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `compile_jobs_requeue_idx` ON `compile_jobs` (`status`,`requeue_at`);