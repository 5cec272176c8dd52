import { useT } from '../../../i18n/use-t';

/**
 * The skill's YAML in a plain monospace textarea with line numbers beside it (validation names YAML errors by line).
 * The textarea grows with its text, so the frame scrolls both together and the numbers stay beside their lines.
 */
export function SkillTextEditor({ text, onChange, readOnly }: { text: string; onChange(text: string): void; readOnly: boolean }) {
  const t = useT();
  const lines = text.split('\n').length;
  return (
    <div className="skill-editor-frame">
      <pre className="skill-editor-gutter" aria-hidden="true">
        {Array.from({ length: lines }, (_, i) => i + 1).join('\n')}
      </pre>
      <textarea
        className="skill-editor-text"
        aria-label={t('skillEditor.editor.label')}
        data-testid="skill-editor"
        spellCheck={false}
        value={text}
        rows={Math.max(lines, 24)}
        readOnly={readOnly}
        onChange={(event) => onChange(event.target.value)}
      />
    </div>
  );
}
