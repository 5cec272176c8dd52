import type { ProtocolContextResponse } from '../../../api';
import { useT } from '../../../i18n/use-t';
import { stageLabel } from '../labels';
import { stageSteps } from '../stage-steps';

const MARK = { completed: '✓', current: '●', upcoming: '○' } as const;

/** The five stages in order: completed ones ticked, the current one highlighted. */
export function StageProgress({ context }: { context: ProtocolContextResponse }) {
  const t = useT();
  const steps = stageSteps(context);
  const current = steps.find((step) => step.stageId === context.currentStage);
  return (
    <section className="protocol-section" aria-labelledby="stage-progress-title">
      <h3 id="stage-progress-title">{t('protocol.progress.title')}</h3>
      {current ? <p className="muted small">{t('protocol.progress.summary', { current: current.position, total: steps.length })}</p> : null}
      <ol className="stage-steps" data-testid="stage-progress">
        {steps.map((step) => (
          <li
            key={step.stageId}
            className={`stage-step stage-step-${step.state}${step.stageId === context.currentStage ? ' stage-step-active' : ''}`}
            data-stage={step.stageId}
            data-state={step.state}
            aria-current={step.stageId === context.currentStage ? 'step' : undefined}
          >
            <span className="stage-mark" aria-hidden="true">
              {MARK[step.state]}
            </span>
            <span>{stageLabel(t, step.stageId, step.stageName)}</span>
            <span className="visually-hidden">({t(`protocol.progress.${step.state}`)})</span>
          </li>
        ))}
      </ol>
    </section>
  );
}
