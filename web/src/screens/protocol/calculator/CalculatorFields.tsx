import type { MessageKey } from '../../../i18n/en';
import { useT } from '../../../i18n/use-t';
import { COMMON_FIELDS, DESIGN_FIELDS, DESIGNS, HYPOTHESES, hasContinuityCorrection, type CalculatorForm, type Design } from './calculator-form';

interface CalculatorFieldsProps {
  form: CalculatorForm;
  onChange(form: CalculatorForm): void;
}

function NumberField({ name, label, form, onChange }: CalculatorFieldsProps & { name: string; label: string }) {
  return (
    <label>
      {label}
      <input name={name} inputMode="decimal" value={form[name] ?? ''} onChange={(event) => onChange({ ...form, [name]: event.target.value })} />
    </label>
  );
}

/** The design, its hypothesis, the inputs every design has, then the chosen design's own inputs. */
export function CalculatorFields({ form, onChange }: CalculatorFieldsProps) {
  const t = useT();
  const numberLabel = (name: string) =>
    t((name === 'p1' && form.design === 'one_proportion' ? 'calculator.field.p1.one_proportion' : `calculator.field.${name}`) as MessageKey);
  const common = COMMON_FIELDS.filter((name) => name !== 'sides');
  return (
    <>
      <label>
        {t('calculator.design')}
        <select value={form.design} onChange={(event) => onChange({ ...form, design: event.target.value as Design })}>
          {DESIGNS.map((design) => (
            <option key={design} value={design}>
              {t(`calculator.design.${design}`)}
            </option>
          ))}
        </select>
      </label>
      <label>
        {t('calculator.hypothesis')}
        <select value={form.hypothesis} onChange={(event) => onChange({ ...form, hypothesis: event.target.value })}>
          {HYPOTHESES.map((hypothesis) => (
            <option key={hypothesis} value={hypothesis}>
              {t(`calculator.hypothesis.${hypothesis}`)}
            </option>
          ))}
        </select>
      </label>
      <label>
        {t('calculator.sides')}
        <select value={form.sides} onChange={(event) => onChange({ ...form, sides: event.target.value })}>
          <option value="2">{t('calculator.sides.2')}</option>
          <option value="1">{t('calculator.sides.1')}</option>
        </select>
      </label>
      {[...common, ...DESIGN_FIELDS[form.design], ...(form.hypothesis === 'superiority' ? [] : ['margin'])].map((name) => (
        <NumberField key={name} name={name} label={numberLabel(name)} form={form} onChange={onChange} />
      ))}
      {hasContinuityCorrection(form) ? (
        <label className="checkbox-row">
          <input
            type="checkbox"
            name="continuityCorrection"
            checked={form.continuityCorrection === 'true'}
            onChange={(event) => onChange({ ...form, continuityCorrection: event.target.checked ? 'true' : '' })}
          />
          {t('calculator.field.continuityCorrection')}
        </label>
      ) : null}
    </>
  );
}
