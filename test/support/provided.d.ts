// What the vitest global setups hand the tests through inject(), declared once for every suite:
// the setups run in Node and the Workers tests in workerd, two TypeScript programs that both
// include this file.
export {};

declare module "vitest" {
  export interface ProvidedContext {
    /** test/e2e/global-setup.ts: the `npm run dev` server, and the folder of its local state. */
    baseUrl: string;
    persistTo: string;
    /** test/support/receiver-setup.ts: the webhook receiver, and a loopback URL nothing listens on. */
    receiverUrl: string;
    deadUrl: string;
    /** test/support/fake-graph-setup.ts: the fake WhatsApp Cloud API. */
    graphUrl: string;
    /** test/workers/compile/global-setup.ts: the compile server, and the receiver of compile callbacks. */
    compilerUrl: string;
    callbackReceiverUrl: string;
    /** container/test/global-setup.ts: the compile server shared by the compile-server suite's files. */
    sharedCompilerUrl: string;
  }
}
