import { AgentReply } from '../../components/AgentReply';
import { ToolsUsed } from '../../components/ToolsUsed';
import { shownText } from '../../stores/chat-stream';
import { ErrorAlert } from '../../components/ErrorAlert';
import { useT } from '../../i18n/use-t';
import type { ProtocolTurn } from '../../stores/protocol-agent';
import { stageLabel } from './labels';
import { replyWithoutIssueNotes } from './reply-text';
import { visibleStreamText } from './stream-text';

/** What the reply asks the researcher to look at (reflexion warnings), and a stage the reply moved past. */
function ReplyNotes({ turn }: { turn: ProtocolTurn }) {
  const t = useT();
  const result = turn.result;
  if (!result) return null;
  return (
    <>
      {result.issues.length > 0 ? (
        <div className="alert alert-warning" role="status" data-testid="reply-issues">
          <strong className="alert-title">{t('protocol.issuesTitle')}</strong>
          <ul>
            {result.issues.map((issue) => (
              <li key={issue}>{issue}</li>
            ))}
          </ul>
        </div>
      ) : null}
      {result.stageStatus === 'completed' ? <p className="muted small">{t('protocol.stageMovedOn', { stage: stageLabel(t, result.currentStage) })}</p> : null}
    </>
  );
}

export function ProtocolTurnView({ turn }: { turn: ProtocolTurn }) {
  const t = useT();
  const text = turn.result ? replyWithoutIssueNotes(turn.result.message, turn.result.issues) : visibleStreamText(shownText(turn.streaming));
  const isWriting = !turn.result && turn.requestError === undefined && !turn.streaming.isStopped;
  return (
    <div className="turn" data-testid="protocol-turn">
      <div className="message message-user">
        <div className="message-author">{t('chat.you')}</div>
        <div className="message-text">{turn.input}</div>
      </div>
      <AgentReply author={t('protocol.agentName')} text={text} isWriting={isWriting} isStopped={turn.streaming.isStopped} testId={turn.result ? 'protocol-reply' : 'protocol-streaming'} workingLabel={t('protocol.working')}>
        <ToolsUsed tools={turn.streaming.tools} />
        <ReplyNotes turn={turn} />
      </AgentReply>
      {turn.requestError !== undefined ? <ErrorAlert error={turn.requestError} title={t('answer.requestFailed')} /> : null}
    </div>
  );
}
