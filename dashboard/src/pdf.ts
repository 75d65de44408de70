// PDF.js, loaded with the LaTeX page only. Its worker is a same-origin file of the build (the CSP
// allows workers from 'self' only).
import { getDocument, GlobalWorkerOptions } from "pdfjs-dist";
import workerUrl from "pdfjs-dist/build/pdf.worker.min.mjs?url";

GlobalWorkerOptions.workerSrc = workerUrl;

/** Draws up to `maxPages` pages of `data` as canvases into `container` (replacing what was there). */
export async function renderPdf(data: ArrayBuffer, container: HTMLElement, maxPages = 20): Promise<number> {
  const task = getDocument({ data: new Uint8Array(data) });
  const doc = await task.promise;
  try {
    container.replaceChildren();
    const pages = Math.min(doc.numPages, maxPages);
    const scale = Math.min(2, window.devicePixelRatio || 1);
    for (let n = 1; n <= pages; n++) {
      const page = await doc.getPage(n);
      const width = Math.min(container.clientWidth || 800, 900);
      const base = page.getViewport({ scale: 1 });
      const viewport = page.getViewport({ scale: (width / base.width) * scale });
      const canvas = document.createElement("canvas");
      canvas.width = Math.floor(viewport.width);
      canvas.height = Math.floor(viewport.height);
      canvas.style.width = `${Math.floor(viewport.width / scale)}px`;
      canvas.setAttribute("role", "img");
      canvas.setAttribute("aria-label", `Page ${n} of ${doc.numPages}`);
      canvas.dataset.page = String(n);
      container.append(canvas);
      await page.render({ canvas, viewport }).promise;
      canvas.dataset.rendered = "true";
    }
    return doc.numPages;
  } finally {
    void task.destroy();
  }
}
