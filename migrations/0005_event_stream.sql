CREATE TABLE `stream_tickets` (
	`hash` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`key_id` text NOT NULL,
	`expires_at` integer NOT NULL,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `stream_tickets_expiry_idx` ON `stream_tickets` (`expires_at`);