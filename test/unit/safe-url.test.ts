import { describe, expect, it } from "vitest";
import { checkTargetUrl } from "../../src/platform/safe-url.ts";

const deployed = { allowLoopback: false };
const dev = { allowLoopback: true };

// Every way we know to name a host we must never call, as a user could register it.
const HOSTILE: Array<[string, string]> = [
  ["http://example.com/hook", "plain http"],
  ["ftp://example.com/hook", "other scheme"],
  ["javascript:alert(1)", "script URL"],
  ["not a url", "garbage"],
  ["https://user:pass@example.com/", "credentials"],
  ["https://user@example.com/", "user only"],
  ["https://127.0.0.1:443@evil.example/", "credentials that look like a host"],
  ["https://localhost/", "localhost"],
  ["https://localhost./", "localhost with trailing dot"],
  ["https://LOCALHOST/", "localhost upper case"],
  ["https://api.localhost/", "*.localhost"],
  ["https://printer.local/", "*.local"],
  ["https://metadata.google.internal/computeMetadata/v1/", "*.internal"],
  ["https://intranet/", "single-label name"],
  ["https://127.0.0.1/", "loopback"],
  ["https://127.0.0.1./", "loopback, trailing dot"],
  ["https://127.1/", "loopback, short form"],
  ["https://2130706433/", "loopback, decimal"],
  ["https://0x7f000001/", "loopback, hex"],
  ["https://0x7f.0x0.0x0.0x1/", "loopback, dotted hex"],
  ["https://0177.0.0.1/", "loopback, octal"],
  ["https://%31%32%37.0.0.1/", "loopback, percent-encoded"],
  ["https://１２７.０.０.１/", "loopback, full-width digits"],
  ["https://0.0.0.0/", "unspecified"],
  ["https://0/", "unspecified, short"],
  ["https://10.1.2.3/", "private 10/8"],
  ["https://172.16.0.1/", "private 172.16/12"],
  ["https://172.31.255.255/", "private 172.16/12, top"],
  ["https://192.168.0.10/", "private 192.168/16"],
  ["https://100.64.0.1/", "CGNAT"],
  ["https://169.254.169.254/latest/meta-data/", "cloud metadata"],
  ["https://2852039166/", "cloud metadata, decimal"],
  ["https://0xa9fea9fe/", "cloud metadata, hex"],
  ["https://224.0.0.1/", "multicast"],
  ["https://255.255.255.255/", "broadcast"],
  ["https://[::1]/", "IPv6 loopback"],
  ["https://[0:0:0:0:0:0:0:1]/", "IPv6 loopback, long"],
  ["https://[::]/", "IPv6 unspecified"],
  ["https://[::ffff:127.0.0.1]/", "IPv4-mapped loopback"],
  ["https://[::ffff:7f00:1]/", "IPv4-mapped loopback, hex"],
  ["https://[::ffff:169.254.169.254]/", "IPv4-mapped metadata"],
  ["https://[0:0:0:0:0:ffff:a9fe:a9fe]/", "IPv4-mapped metadata, long hex"],
  ["https://[::127.0.0.1]/", "IPv4-compatible loopback"],
  ["https://[64:ff9b::a9fe:a9fe]/", "NAT64 of metadata"],
  ["https://[2002:7f00:1::]/", "6to4 of loopback"],
  ["https://[::ffff:0:127.0.0.1]/", "SIIT (IPv4-translated) loopback"],
  ["https://[::ffff:0:a9fe:a9fe]/", "SIIT metadata, hex"],
  ["https://[0:0:0:0:ffff:0:a00:1]/", "SIIT private 10/8, long"],
  ["https://[::10.0.0.1]/", "IPv4-compatible private"],
  ["https://[64:ff9b::127.0.0.1]/", "NAT64 of loopback, dotted"],
  ["https://[64:ff9b::c0a8:1]/", "NAT64 of 192.168.0.1"],
  ["https://[64:ff9b:1::a9fe:a9fe]/", "NAT64 local-use /48"],
  ["https://[64:ff9b:1:a9fe:a9:fe00::]/", "NAT64 local-use /48, RFC 6052 layout"],
  ["https://[2002:a9fe:a9fe::1]/", "6to4 of metadata"],
  ["https://[2002:c0a8:1:1::1]/", "6to4 of 192.168.0.1"],
  ["https://[2001:0:7f00:1::1]/", "Teredo with a loopback server"],
  ["https://[2001:0:5db8:1::80ff:f5fe]/", "Teredo, public server, obfuscated client 127.0.10.1"],
  ["https://[2001:0:4136:e378:8000:63bf:5601:5601]/", "Teredo, public server, obfuscated client 169.254.169.254"],
  ["https://[::ffff:ffff:0:7f00:1]/", "other ::/8 forms"],
  ["https://[fe80::1]/", "IPv6 link-local"],
  ["https://[fc00::1]/", "IPv6 unique local"],
  ["https://[fd00:ec2::254]/", "AWS IPv6 metadata"],
  ["https://[ff02::1]/", "IPv6 multicast"],
];

describe("checkTargetUrl: hostile URLs are refused", () => {
  it.each(HOSTILE)("%s (%s)", (url) => {
    const result = checkTargetUrl(url, deployed);
    expect(result.ok, `${url} should be refused`).toBe(false);
  });

  // In dev, URLs that are just other spellings of 127.0.0.1 / localhost / [::1] are allowed on purpose.
  it.each(HOSTILE.filter(([, why]) => !/^(loopback|localhost|IPv6 loopback)/.test(why)))("%s is refused in dev too (%s)", (url) => {
    expect(checkTargetUrl(url, dev).ok).toBe(false);
  });
});

describe("checkTargetUrl: allowed URLs", () => {
  it.each(["https://example.com/hooks/wa", "https://hooks.example.co.uk:8443/x?y=1", "https://93.184.216.34/hook", "https://[2606:4700:4700::1111]/hook", "https://[64:ff9b::5db8:d822]/hook", "https://[2002:5db8:d822::1]/hook", "https://[2001:0:4136:e378:8000:63bf:a247:27dd]/hook"])("%s", (url) => {
    expect(checkTargetUrl(url, deployed)).toMatchObject({ ok: true });
  });

  it("dev (WEBHOOK_ALLOW_LOOPBACK=1) allows http and https on 127.0.0.1 and localhost only", () => {
    for (const url of ["http://127.0.0.1:3000/hook", "http://localhost:8080/", "https://127.0.0.1/"]) expect(checkTargetUrl(url, dev).ok, url).toBe(true);
    for (const url of ["http://10.0.0.1/", "http://example.com/", "http://user:pw@127.0.0.1/", "http://169.254.169.254/"]) expect(checkTargetUrl(url, dev).ok, url).toBe(false);
  });

  it("says why, for the 400 message", () => {
    expect(checkTargetUrl("http://example.com", deployed)).toEqual({ ok: false, reason: "must use https" });
    expect(checkTargetUrl("https://a:b@example.com", deployed)).toEqual({ ok: false, reason: "must not contain credentials" });
  });
});
