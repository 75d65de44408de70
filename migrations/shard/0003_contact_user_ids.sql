CREATE INDEX `contacts_account_user_idx` ON `contacts` (`account_id`, json_extract(`identity`, '$.userId'));--> statement-breakpoint
-- A `system` message (the network's notice about a person) is inbound but not the person writing:
-- it opens no customer-service window and is not an unread message.
DROP TRIGGER `messages_chat_activity`;--> statement-breakpoint
CREATE TRIGGER `messages_chat_activity` AFTER INSERT ON `messages` BEGIN
	INSERT INTO `chats` (`account_id`, `session_id`, `chat_id`, `last_message_id`, `last_message_at`, `last_inbound_id`, `last_inbound_at`, `unread_count`, `first_unread_id`)
	VALUES (
		new.`account_id`, new.`session_id`, new.`chat_id`, new.`id`, new.`created_at`,
		CASE WHEN new.`direction` = 'inbound' AND new.`type` <> 'system' THEN new.`id` END,
		CASE WHEN new.`direction` = 'inbound' AND new.`type` <> 'system' THEN new.`created_at` END,
		CASE WHEN new.`direction` = 'inbound' AND new.`type` <> 'system' THEN 1 ELSE 0 END,
		CASE WHEN new.`direction` = 'inbound' AND new.`type` <> 'system' THEN new.`id` END
	)
	ON CONFLICT (`session_id`, `chat_id`) DO UPDATE SET
		`last_message_id` = CASE WHEN excluded.`last_message_at` >= `chats`.`last_message_at` THEN excluded.`last_message_id` ELSE `chats`.`last_message_id` END,
		`last_message_at` = max(`chats`.`last_message_at`, excluded.`last_message_at`),
		`last_inbound_id` = CASE WHEN excluded.`last_inbound_at` IS NOT NULL AND excluded.`last_inbound_at` >= coalesce(`chats`.`last_inbound_at`, 0) THEN excluded.`last_inbound_id` ELSE `chats`.`last_inbound_id` END,
		`last_inbound_at` = CASE WHEN excluded.`last_inbound_at` IS NULL THEN `chats`.`last_inbound_at` ELSE max(coalesce(`chats`.`last_inbound_at`, 0), excluded.`last_inbound_at`) END,
		`unread_count` = `chats`.`unread_count` + excluded.`unread_count`,
		`first_unread_id` = coalesce(`chats`.`first_unread_id`, excluded.`first_unread_id`);
END;
