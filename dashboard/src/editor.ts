// The playground's editor: CodeMirror 6 with the legacy stex mode for LaTeX highlighting, and a way to
// mark the line a compile error points at. Loaded only with the LaTeX page.
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { bracketMatching, defaultHighlightStyle, StreamLanguage, syntaxHighlighting } from "@codemirror/language";
import { stex } from "@codemirror/legacy-modes/mode/stex";
import { EditorState, StateEffect, StateField, type Extension } from "@codemirror/state";
import { Decoration, drawSelection, EditorView, highlightActiveLine, keymap, lineNumbers, type DecorationSet } from "@codemirror/view";

const setErrorLine = StateEffect.define<number | null>();
const errorLineMark = Decoration.line({ class: "cm-error-line", attributes: { "data-error-line": "true" } });

const errorLineField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(deco, tr) {
    deco = deco.map(tr.changes);
    for (const e of tr.effects) {
      if (!e.is(setErrorLine)) continue;
      if (e.value === null || e.value < 1 || e.value > tr.state.doc.lines) deco = Decoration.none;
      else deco = Decoration.set([errorLineMark.range(tr.state.doc.line(e.value).from)]);
    }
    // Editing clears the mark: it pointed at the text that was compiled.
    return tr.docChanged ? Decoration.none : deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});

export interface LatexEditor {
  view: EditorView;
  text(): string;
  markError(line: number | null): void;
  destroy(): void;
}

/** Styles through CodeMirror's theme (constructed style sheets), as the page's CSP allows no inline style. */
const theme = EditorView.theme({
  "&": { backgroundColor: "#fff", fontSize: "14px", maxHeight: "70vh" },
  ".cm-scroller": { fontFamily: 'ui-monospace, "SFMono-Regular", Menlo, monospace' },
  ".cm-error-line": { backgroundColor: "#fee4e2" },
});

/**
 * The editor lives in a shadow root: there CodeMirror adds its styles as constructed style sheets
 * (adoptedStyleSheets), which a `style-src 'self'` CSP allows; in the document itself it would insert
 * a <style> element, which that CSP blocks.
 */
export function createEditor(host: HTMLElement, doc: string, label: string, onChange: () => void): LatexEditor {
  const root = host.shadowRoot ?? host.attachShadow({ mode: "open" });
  const parent = document.createElement("div");
  root.replaceChildren(parent);
  const extensions: Extension[] = [
    theme,
    lineNumbers(),
    history(),
    drawSelection(),
    highlightActiveLine(),
    bracketMatching(),
    syntaxHighlighting(defaultHighlightStyle),
    // Tab indents; Escape then Tab moves focus on (CodeMirror's documented keyboard escape hatch).
    keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
    StreamLanguage.define(stex),
    errorLineField,
    EditorView.lineWrapping,
    EditorView.contentAttributes.of({ "aria-label": label }),
    EditorView.updateListener.of((u) => {
      if (u.docChanged) onChange();
    }),
  ];
  const view = new EditorView({ state: EditorState.create({ doc, extensions }), parent, root });
  return {
    view,
    text: () => view.state.doc.toString(),
    markError(line) {
      const effects: StateEffect<unknown>[] = [setErrorLine.of(line)];
      if (line !== null && line >= 1 && line <= view.state.doc.lines) {
        const pos = view.state.doc.line(line).from;
        effects.push(EditorView.scrollIntoView(pos, { y: "center" }));
        view.dispatch({ effects, selection: { anchor: pos } });
      } else view.dispatch({ effects });
    },
    destroy: () => view.destroy(),
  };
}
