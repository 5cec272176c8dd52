import { useState, type FormEvent } from 'react';
import { ErrorAlert } from '../../../components/ErrorAlert';
import { useT } from '../../../i18n/use-t';
import { useProtocolAgentStore } from '../../../stores/protocol-agent';
import { keyLabel } from '../labels';
import { buildPatch, draftOf, editableEntries } from './context-fields';

interface ContextEditorProps {
  field: string;
  fieldName: string;
  data: Record<string, unknown>;
  onClose(): void;
}

/** One input per editable key of a context field; Save sends only what changed (PATCH adds keys to the field). */
export function ContextEditor({ field, fieldName, data, onClose }: ContextEditorProps) {
  const t = useT();
  const [draft, setDraft] = useState(() => draftOf(field, data));
  const [problem, setProblem] = useState<string | null>(null);
  const savingField = useProtocolAgentStore((state) => state.savingField);
  const saveError = useProtocolAgentStore((state) => state.saveError);

  async function save(event: FormEvent) {
    event.preventDefault();
    const { value, invalid } = buildPatch(field, data, draft);
    if (invalid.length > 0) return setProblem(t('protocol.context.notANumber', { fields: invalid.map((path) => keyLabel(t, path)).join(', ') }));
    if (Object.keys(value).length === 0) return setProblem(t('protocol.context.nothingChanged'));
    setProblem(null);
    if (await useProtocolAgentStore.getState().saveField(field, value)) onClose();
  }

  return (
    <form className="context-editor" aria-label={t('protocol.context.editLabel', { field: fieldName })} onSubmit={(event) => void save(event)}>
      {editableEntries(field).map((entry) => {
        const id = `context-${field}-${entry.path.replace('.', '-')}`;
        const props = { id, value: draft[entry.path] ?? '', onChange: (event: { target: { value: string } }) => setDraft({ ...draft, [entry.path]: event.target.value }) };
        return (
          <div className="context-input" key={entry.path}>
            <label htmlFor={id}>{keyLabel(t, entry.path)}</label>
            {entry.kind === 'longText' ? <textarea rows={2} {...props} /> : <input inputMode={entry.kind === 'number' ? 'decimal' : undefined} {...props} />}
          </div>
        );
      })}
      {problem ? (
        <p className="field-error" role="alert">
          {problem}
        </p>
      ) : null}
      {saveError?.field === field ? <ErrorAlert error={saveError.error} title={t('protocol.context.saveFailed')} /> : null}
      <div className="inline-form-actions">
        <button type="submit" className="button button-primary button-small" disabled={savingField !== null}>
          {savingField === field ? t('common.saving') : t('protocol.context.save')}
        </button>
        <button type="button" className="button button-small" onClick={onClose}>
          {t('common.cancel')}
        </button>
      </div>
    </form>
  );
}
