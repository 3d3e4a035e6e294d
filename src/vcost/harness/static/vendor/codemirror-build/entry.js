// The editor the vcost harness uses: CodeMirror 6 basic setup + Python, exposed as window.VcostEditor.
import { EditorView, basicSetup } from "codemirror";
import { EditorState } from "@codemirror/state";
import { keymap } from "@codemirror/view";
import { indentWithTab } from "@codemirror/commands";
import { python } from "@codemirror/lang-python";

function create(parent, doc, onChange, readOnly) {
  const extensions = [basicSetup, keymap.of([indentWithTab]), python(), EditorView.lineWrapping];
  if (readOnly) extensions.push(EditorState.readOnly.of(true), EditorView.editable.of(false));
  if (onChange) extensions.push(EditorView.updateListener.of((u) => { if (u.docChanged) onChange(u); }));
  return new EditorView({ doc: doc || "", extensions, parent });
}
window.VcostEditor = { create };
