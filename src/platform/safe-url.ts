/**
 * Rules for URLs we call on a user's behalf (webhooks, compile callbacks): https only, no
 * credentials, and no host that is, or could encode, a private, loopback, link-local, CGNAT,
 * multicast, unspecified or metadata address; nor localhost, *.local, *.internal. An IPv6 address
 * that carries an IPv4 address (mapped, compatible, SIIT, NAT64, 6to4, Teredo) is judged by it. In dev
 * (`ALLOW_LOOPBACK_URLS=1`) http and https to 127.0.0.1 / localhost are allowed.
 *
 * This judges the URL as written. Workers' fetch() resolves names on Cloudflare's network, which
 * does not route to private ranges, so a public name resolving to a private address is not a path in.
 */
export type UrlCheck = { ok: true; url: URL } | { ok: false; reason: string };

const BLOCKED_SUFFIXES = [".local", ".internal", ".localhost", ".localdomain", ".home.arpa", ".intranet", ".lan", ".corp"];

export function checkTargetUrl(raw: string, opts: { allowLoopback: boolean }): UrlCheck {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "is not an absolute URL" };
  }
  if (url.username || url.password) return { ok: false, reason: "must not contain credentials" };
  const host = url.hostname.toLowerCase().replace(/\.$/, "");
  const loopbackHost = host === "localhost" || host === "127.0.0.1" || host === "[::1]";
  if (opts.allowLoopback && loopbackHost && (url.protocol === "http:" || url.protocol === "https:")) return { ok: true, url };
  if (url.protocol !== "https:") return { ok: false, reason: "must use https" };
  if (url.port && url.port !== "443" && !/^\d+$/.test(url.port)) return { ok: false, reason: "has an invalid port" };
  if (host === "" || host === "localhost" || BLOCKED_SUFFIXES.some((s) => host.endsWith(s))) return { ok: false, reason: "must be a public host" };
  if (host.startsWith("[")) {
    return isPublicIpv6(host.slice(1, -1)) ? { ok: true, url } : { ok: false, reason: "must not target a private or reserved address" };
  }
  // WHATWG URL parsing already turns decimal, hex and octal IPv4 forms into dotted quads.
  const v4 = parseDottedIpv4(host);
  if (v4) return isPublicIpv4(v4) ? { ok: true, url } : { ok: false, reason: "must not target a private or reserved address" };
  if (/^[0-9.]+$/.test(host) || /^0x/i.test(host)) return { ok: false, reason: "has an invalid IP address" };
  if (!host.includes(".")) return { ok: false, reason: "must be a fully qualified public host name" };
  return { ok: true, url };
}

function parseDottedIpv4(host: string): number[] | null {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return null;
  const nums = parts.map(Number);
  return nums.every((n) => n <= 255) ? nums : null;
}

export function isPublicIpv4([a, b, c]: number[]): boolean {
  if (a === undefined || b === undefined || c === undefined) return false;
  if (a === 0 || a === 10 || a === 127) return false; // this network, private, loopback
  if (a === 100 && b >= 64 && b <= 127) return false; // CGNAT 100.64/10
  if (a === 169 && b === 254) return false; // link-local, cloud metadata
  if (a === 172 && b >= 16 && b <= 31) return false;
  if (a === 192 && b === 168) return false;
  if (a === 192 && b === 0 && (c === 0 || c === 2)) return false; // IETF protocol assignments, TEST-NET-1
  if (a === 198 && (b === 18 || b === 19)) return false; // benchmarking
  if (a === 198 && b === 51 && c === 100) return false; // TEST-NET-2
  if (a === 203 && b === 0 && c === 113) return false; // TEST-NET-3
  if (a >= 224) return false; // multicast, reserved, broadcast
  return true;
}

function expandIpv6(addr: string): number[] | null {
  let text = addr.toLowerCase();
  const zone = text.indexOf("%");
  if (zone >= 0) text = text.slice(0, zone);
  // Embedded IPv4 tail (e.g. ::ffff:127.0.0.1).
  const v4Match = text.match(/(\d+\.\d+\.\d+\.\d+)$/);
  if (v4Match) {
    const v4 = parseDottedIpv4(v4Match[1]!);
    if (!v4) return null;
    text = text.slice(0, -v4Match[1]!.length) + `${((v4[0]! << 8) | v4[1]!).toString(16)}:${((v4[2]! << 8) | v4[3]!).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? head.length !== 8 : missing < 1) return null;
  const groups = [...head, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  const nums = groups.map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : NaN));
  return nums.some(Number.isNaN) ? null : nums;
}

/** The IPv4 address in two 16-bit groups. */
function v4Of(hi: number, lo: number): number[] {
  return [hi >> 8, hi & 255, lo >> 8, lo & 255];
}

/**
 * IPv4 addresses an IPv6 address carries and that a relay or translator would deliver to: the
 * address is only as public as every one of them. Null when it embeds none.
 */
function embeddedIpv4(g: number[]): number[][] | null {
  const [g0, g1, g2, g3, g4, g5, g6, g7] = g as [number, number, number, number, number, number, number, number];
  const zeroHead = g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0;
  // ::a.b.c.d (IPv4-compatible), ::ffff:a.b.c.d (IPv4-mapped), ::ffff:0:a.b.c.d (SIIT, IPv4-translated).
  if (zeroHead && g4 === 0 && (g5 === 0 || g5 === 0xffff)) return [v4Of(g6, g7)];
  if (zeroHead && g4 === 0xffff && g5 === 0) return [v4Of(g6, g7)];
  // NAT64 well-known prefix 64:ff9b::/96.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return [v4Of(g6, g7)];
  // 6to4 2002::/16: the relay's IPv4 address in bits 16-47.
  if (g0 === 0x2002) return [v4Of(g1, g2)];
  // Teredo 2001::/32: the server in bits 32-63, the client (each bit inverted) in the last 32.
  if (g0 === 0x2001 && g1 === 0) return [v4Of(g2, g3), v4Of(g6 ^ 0xffff, g7 ^ 0xffff)];
  return null;
}

export function isPublicIpv6(addr: string): boolean {
  const g = expandIpv6(addr);
  if (!g) return false;
  const [g0, g1, g2, g3] = g as [number, number, number, number];
  if (g.every((x) => x === 0)) return false; // ::
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return false; // ::1
  const v4s = embeddedIpv4(g);
  if (v4s) return v4s.every(isPublicIpv4);
  // The rest of NAT64's 64:ff9b::/32: local-use 64:ff9b:1::/48 (RFC 8215) and prefixes no translator uses publicly.
  if (g0 === 0x64 && g1 === 0xff9b) return false;
  if (g0 < 0x0100) return false; // rest of ::/8, reserved (other IPv4-embedding forms among them)
  if ((g0 & 0xfe00) === 0xfc00) return false; // unique local fc00::/7
  if ((g0 & 0xffc0) === 0xfe80 || (g0 & 0xffc0) === 0xfec0) return false; // link-local, site-local
  if ((g0 & 0xff00) === 0xff00) return false; // multicast
  if (g0 === 0x2001 && g1 === 0x0db8) return false; // documentation
  if (g0 === 0x0100 && g1 === 0 && g2 === 0 && g3 === 0) return false; // discard
  return true;
}
