ALTER TABLE `contacts` ADD `identity` text;--> statement-breakpoint
ALTER TABLE `messaging_sessions` ADD `health` text;