ALTER TABLE `webhook_deliveries` ADD `slot_at` integer;--> statement-breakpoint
ALTER TABLE `webhooks` ADD `max_per_second` integer;