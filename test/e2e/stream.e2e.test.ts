import { describe, expect, it } from "vitest";
import { baseUrl, newKey, typedClient } from "./client.ts";

describe("live event stream end to end (npm run dev, a real WebSocket client)", () => {
  it("a browser-style client gets a ticket, opens the socket and receives an inbound message's event", async () => {
    const api = typedClient(await newKey("pro"));
    const { data: session } = await api.POST("/api/sessions", { body: { name: "stream" } });
    const { data: t, response } = await api.POST("/api/events/stream/tickets");
    expect(response.status).toBe(201);
    const ws = new WebSocket(`${baseUrl().replace(/^http/, "ws")}/api/events/stream?ticket=${t!.ticket}&types=message.received`);
    const received = new Promise<{ id: string; type: string; data: { text: string } }>((resolve, reject) => {
      ws.onmessage = (m) => resolve(JSON.parse(String(m.data)));
      ws.onerror = () => reject(new Error("socket error"));
    });
    await new Promise<void>((resolve, reject) => {
      ws.onopen = () => resolve();
      ws.onclose = (e) => reject(new Error(`closed ${e.code}`));
    });
    await api.POST("/api/sessions/{id}/sandbox/inbound", { params: { path: { id: session!.id } }, body: { from: "15550001234", text: "over the socket" } });
    const e = await received;
    expect(e).toMatchObject({ type: "message.received", data: expect.objectContaining({ text: "over the socket" }) });
    expect(e.id).toMatch(/^evt_/);
    // The ticket was used up by the open socket.
    const again = new WebSocket(`${baseUrl().replace(/^http/, "ws")}/api/events/stream?ticket=${t!.ticket}`);
    const outcome = await new Promise<string>((resolve) => {
      again.onopen = () => resolve("open");
      again.onerror = () => resolve("refused");
    });
    expect(outcome).toBe("refused");
    ws.close(1000);
  });
});
