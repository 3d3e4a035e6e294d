// The editor the vcost harness uses: CodeMirror 6 basic setup + Python, exposed as window.VcostEditor.
// Python indentation (4 spaces); Tab indents, and Escape then Tab moves focus on (CodeMirror's
// built-in escape from the Tab binding, which the page tells the participant about).
import { EditorView, basicSetup } from "codemirror";
import { EditorState } from "@codemirror/state";
import { keymap } from "@codemirror/view";
import { indentWithTab } from "@codemirror/commands";
import { indentUnit } from "@codemirror/language";
import { python } from "@codemirror/lang-python";

// options: { label: accessible name, describedBy: id of the element with the keyboard hint,
//            nonce: the page's CSP nonce for the editor's <style> elements (style-src) }
function create(parent, doc, onChange, readOnly, options) {
  const opts = options || {};
  const extensions = [basicSetup, keymap.of([indentWithTab]), python(), EditorView.lineWrapping,
    indentUnit.of("    "), EditorState.tabSize.of(4)];
  const attrs = {};
  if (opts.label) attrs["aria-label"] = opts.label;
  if (opts.describedBy) attrs["aria-describedby"] = opts.describedBy;
  extensions.push(EditorView.contentAttributes.of(attrs));
  if (opts.nonce) extensions.push(EditorView.cspNonce.of(opts.nonce));
  if (readOnly) extensions.push(EditorState.readOnly.of(true), EditorView.editable.of(false));
  if (onChange) extensions.push(EditorView.updateListener.of((u) => { if (u.docChanged) onChange(u); }));
  return new EditorView({ doc: doc || "", extensions, parent });
}
window.VcostEditor = { create };
