CREATE INDEX `events_account_id_idx` ON `events` (`account_id`,`id`);--> statement-breakpoint
CREATE INDEX `events_account_type_idx` ON `events` (`account_id`,`type`,`id`);--> statement-breakpoint
CREATE INDEX `events_account_session_idx` ON `events` (`account_id`,`session_id`,`id`);--> statement-breakpoint
CREATE INDEX `deliveries_webhook_status_idx` ON `webhook_deliveries` (`webhook_id`,`status`,`event_id`);--> statement-breakpoint
CREATE INDEX `deliveries_account_status_event_idx` ON `webhook_deliveries` (`account_id`,`status`,`event_id`);