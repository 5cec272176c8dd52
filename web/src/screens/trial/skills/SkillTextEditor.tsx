import { yaml } from '@codemirror/lang-yaml';
import { lintGutter, setDiagnostics, type Diagnostic } from '@codemirror/lint';
import { Compartment, EditorState } from '@codemirror/state';
import { EditorView } from '@codemirror/view';
import { basicSetup } from 'codemirror';
import { useEffect, useLayoutEffect, useRef } from 'react';
import type { SkillValidation } from '../../../api/skills-api';
import { useT } from '../../../i18n/use-t';
import { problemSpans } from './problem-lines';

interface SkillTextEditorProps {
  text: string;
  onChange(text: string): void;
  readOnly: boolean;
  /** The last validation; each problem is marked at its line (gutter and underline), its fix offered in the tooltip. */
  validation?: SkillValidation | null;
  onSuggestion?(word: string, suggestion: string): void;
  /** Set to a line to scroll the editor to it and put the cursor there (a click on a problem's line in the list). */
  goToLine?: { line: number } | null;
}

/** The validation's problems as CodeMirror diagnostics at the lines they name in `text`. */
export function diagnosticsOf(text: string, validation: SkillValidation, suggestionLabel: (suggestion: string) => string, onSuggestion?: (word: string, suggestion: string) => void): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const spans = problemSpans(text, validation.problems.map((problem) => problem.path));
  for (const [index, problem] of validation.problems.entries()) {
    const span = spans[index];
    if (!span) continue;
    const { word, suggestion } = problem;
    diagnostics.push({
      from: span.from,
      to: span.to,
      severity: 'error',
      source: problem.path,
      message: problem.message,
      ...(word && suggestion && onSuggestion ? { actions: [{ name: suggestionLabel(suggestion), apply: () => onSuggestion(word, suggestion) }] } : {}),
    });
  }
  return diagnostics;
}

/**
 * The skill's YAML in CodeMirror 6: line numbers that are the editor's own (they scroll with their lines), YAML
 * highlighting, and the validation's problems marked in a lint gutter at their lines. The text lives in the editor
 * store; the view follows it (a suggestion applied, a version copied in) and reports what is typed.
 */
export function SkillTextEditor({ text, onChange, readOnly, validation, onSuggestion, goToLine }: SkillTextEditorProps) {
  const t = useT();
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const readOnlyMode = useRef(new Compartment());
  // The latest callbacks, for the listener the view was created with.
  const latest = useRef({ onChange, onSuggestion });
  latest.current = { onChange, onSuggestion };

  useEffect(() => {
    const created = new EditorView({
      parent: host.current!,
      state: EditorState.create({
        doc: text,
        extensions: [
          basicSetup,
          yaml(),
          lintGutter(),
          readOnlyMode.current.of([EditorState.readOnly.of(readOnly), EditorView.editable.of(!readOnly)]),
          EditorView.contentAttributes.of({ 'aria-label': t('skillEditor.editor.label'), 'data-testid': 'skill-editor' }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) latest.current.onChange(update.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = created;
    return () => {
      created.destroy();
      view.current = null;
    };
    // Created once; the effects below keep it in step with the props.
  }, []);

  // A layout effect: it runs in the same task as the render that brought the new text, so nothing typed can land
  // between the two and be replaced (a plain effect runs after paint, when a keystroke may already have changed the doc).
  useLayoutEffect(() => {
    const current = view.current;
    if (!current || current.state.doc.toString() === text) return;
    current.dispatch({ changes: { from: 0, to: current.state.doc.length, insert: text } });
  }, [text]);

  useEffect(() => {
    view.current?.dispatch({ effects: readOnlyMode.current.reconfigure([EditorState.readOnly.of(readOnly), EditorView.editable.of(!readOnly)]) });
  }, [readOnly]);

  useEffect(() => {
    const current = view.current;
    if (!current) return;
    // A fix changes the text: a read-only editor (a skill this role may not change) marks the problem only.
    const apply = readOnly ? undefined : (word: string, suggestion: string) => latest.current.onSuggestion?.(word, suggestion);
    const diagnostics = validation ? diagnosticsOf(current.state.doc.toString(), validation, (suggestion) => t('skillEditor.suggestion', { suggestion }), apply) : [];
    current.dispatch(setDiagnostics(current.state, diagnostics));
  }, [validation, t, readOnly]);

  useEffect(() => {
    const current = view.current;
    if (!current || !goToLine) return;
    const line = current.state.doc.line(Math.min(Math.max(goToLine.line, 1), current.state.doc.lines));
    current.dispatch({ selection: { anchor: line.from }, effects: EditorView.scrollIntoView(line.from, { y: 'center' }) });
    current.focus();
  }, [goToLine]);

  return <div className="skill-editor-frame" data-testid="skill-editor-frame" ref={host} />;
}
