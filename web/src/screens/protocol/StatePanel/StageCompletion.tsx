import { ErrorAlert } from '../../../components/ErrorAlert';
import { useT } from '../../../i18n/use-t';
import { useProtocolAgentStore, useProtocolConversation } from '../../../stores/protocol-agent';
import { stageLabel } from '../labels';

/**
 * "Complete stage" and what came of it. A refusal lists each missing item as the server words it, and the stage
 * stays; the researcher fixes them (in the conversation or the editor below) and tries again.
 */
export function StageCompletion({ isProtocolComplete }: { isProtocolComplete: boolean }) {
  const t = useT();
  const completion = useProtocolAgentStore((state) => state.completion);
  const isRunning = useProtocolConversation().isRunning;
  const completeStage = useProtocolAgentStore((state) => state.completeStage);
  const isCompleting = completion.status === 'completing';

  return (
    <div className="stage-completion">
      {isProtocolComplete ? (
        <p className="alert alert-success" data-testid="protocol-all-done">
          {t('protocol.allDone')}
        </p>
      ) : (
        <button type="button" className="button button-primary" onClick={() => void completeStage()} disabled={isCompleting || isRunning}>
          {isCompleting ? t('protocol.completing') : t('protocol.complete')}
        </button>
      )}
      {completion.status === 'failed' ? <ErrorAlert error={completion.error} title={t('protocol.completeFailed')} /> : null}
      {completion.status === 'done' && !completion.response.success ? (
        <div className="alert alert-error" role="alert" data-testid="stage-issues">
          <strong className="alert-title">{t('protocol.completeRefused')}</strong>
          <ul>
            {(completion.response.issues ?? []).map((issue) => (
              <li key={issue}>{issue}</li>
            ))}
          </ul>
          {completion.response.suggestions?.length ? (
            <>
              <strong>{t('protocol.suggestions')}</strong>
              <ul>
                {completion.response.suggestions.map((suggestion) => (
                  <li key={suggestion}>{suggestion}</li>
                ))}
              </ul>
            </>
          ) : null}
        </div>
      ) : null}
      {completion.status === 'done' && completion.response.success ? (
        <div className="alert alert-success" role="status" data-testid="stage-completed">
          <span>{completion.response.nextStage ? t('protocol.completedNext', { stage: stageLabel(t, completion.response.nextStage) }) : t('protocol.completed')}</span>
          {completion.response.summary ? <p className="small">{completion.response.summary}</p> : null}
        </div>
      ) : null}
    </div>
  );
}
