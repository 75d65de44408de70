import type { Server } from "node:http";

/**
 * A test server the Worker under test calls leaves each idle keep-alive connection open until the
 * client (workerd's connection pool) closes it. A server that closes idle connections itself races
 * the client reusing one: the request goes out on a connection whose close the client has not
 * processed yet, and fails unanswered ("Network connection lost", the server having reset or
 * never read it). Under load the client learns of the close late, so the race is lost often: a
 * test's read of the receiver fails, or a webhook attempt never arrives and a count is short.
 * Node closes at `keepAliveTimeout` plus a 1 s buffer; 0 turns that off. Shutdown still ends them.
 */
export function keepIdleConnections<S extends Server>(server: S): S {
  server.keepAliveTimeout = 0;
  return server;
}
