import { expect, inject } from "vitest";

/** The fake Graph API's numbers this test file registered (not the hostile ones): its teardown checks their traffic. */
export const filePhones = new Set<string>();

export interface InvalidTraffic {
  phoneNumberId: string | null;
  method: string;
  path: string;
  errors: string[];
}

/** What the fake found invalid for these numbers: requests, the fake's own answers, webhooks checked for them. */
export async function invalidGraphTraffic(phones: Iterable<string>): Promise<InvalidTraffic[]> {
  const list = [...phones];
  if (list.length === 0) return [];
  return (await (await fetch(`${inject("graphUrl")}/__fake/invalid?phones=${encodeURIComponent(list.join(","))}`)).json()) as InvalidTraffic[];
}

/** Fails (the file, from its afterAll) when any of these numbers saw an invalid request, answer or webhook. */
export async function expectNoInvalidGraphTraffic(phones: Iterable<string> = filePhones): Promise<void> {
  const bad = await invalidGraphTraffic(phones);
  expect(bad.map((r) => `${r.method} ${r.path}: ${r.errors.slice(0, 3).join("; ")}`), "requests, answers or webhooks the Cloud API reference does not allow").toEqual([]);
}
