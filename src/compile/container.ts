import { Container } from "@cloudflare/containers";

/** The TeX compile server (container/) as a Cloudflare Container. */
export class TexContainer extends Container<Env> {
  override defaultPort = 8080;
  override sleepAfter = "10m";
  override enableInternet = false;
}
