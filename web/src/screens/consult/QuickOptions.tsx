import { useT } from '../../i18n/use-t';

/** Answers the consult offered for its last question: tapping one sends it as the patient's message. */
export function QuickOptions({ options, disabled, onPick }: { options: string[]; disabled: boolean; onPick(option: string): void }) {
  const t = useT();
  if (options.length === 0) return null;
  return (
    <div className="quick-options" role="group" aria-label={t('consult.quickOptions')}>
      {options.map((option, index) => (
        <button key={`${index}-${option}`} type="button" className="button button-small quick-option" disabled={disabled} onClick={() => onPick(option)}>
          {option}
        </button>
      ))}
    </div>
  );
}
