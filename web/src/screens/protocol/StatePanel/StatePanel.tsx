import type { ProtocolContextResponse } from '../../../api';
import { useT } from '../../../i18n/use-t';
import { fieldLabel } from '../labels';
import { isProtocolComplete } from '../stage-steps';
import { ContextSection } from './ContextSection';
import { ExportButtons } from './ExportButtons';
import { SpiritCoverage } from './SpiritCoverage';
import { StageCompletion } from './StageCompletion';
import { StageProgress } from './StageProgress';

/** The right column: where the protocol stands, what it holds (editable), its SPIRIT coverage and the export. */
export function StatePanel({ context }: { context: ProtocolContextResponse }) {
  const t = useT();
  const currentField = context.stages.find((stage) => stage.stageId === context.currentStage)?.contextField;
  return (
    <aside className="panel state-panel" aria-labelledby="state-panel-title">
      <h2 id="state-panel-title" className="panel-title">
        {t('protocol.state.title')}
      </h2>
      <StageProgress context={context} />
      <StageCompletion isProtocolComplete={isProtocolComplete(context)} />
      <section className="protocol-section" aria-labelledby="context-title">
        <h3 id="context-title">{t('protocol.context.title')}</h3>
        {context.stages.map((stage) => {
          const data = (context as unknown as Record<string, unknown>)[stage.contextField];
          return (
            <ContextSection
              key={stage.contextField}
              field={stage.contextField}
              fieldName={fieldLabel(t, stage.contextField)}
              data={typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {}}
              isCurrent={stage.contextField === currentField}
              pico={context.pico}
            />
          );
        })}
      </section>
      <SpiritCoverage spirit={context.spirit} />
      <ExportButtons />
    </aside>
  );
}
