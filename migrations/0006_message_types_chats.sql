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
ALTER TABLE `messages` ADD `content` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `reactions` text;--> statement-breakpoint
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
--> statement-breakpoint
-- Conversations of messages stored before chats existed (their inbound messages count as read).
INSERT INTO `chats` (`account_id`, `session_id`, `chat_id`, `last_message_id`, `last_message_at`, `last_inbound_id`, `last_inbound_at`, `unread_count`)
SELECT `account_id`, `session_id`, `chat_id`, max(`id`), max(`created_at`),
	max(CASE WHEN `direction` = 'inbound' THEN `id` END), max(CASE WHEN `direction` = 'inbound' THEN `created_at` END), 0
FROM `messages` GROUP BY `session_id`, `chat_id`;
