ALTER TABLE `events` ADD `fanout_lease_until` integer;--> statement-breakpoint
ALTER TABLE `events` ADD `delivered` text;--> statement-breakpoint
CREATE INDEX `events_account_delivered_idx` ON `events` (`account_id`,`id`) WHERE delivered IS NOT NULL;