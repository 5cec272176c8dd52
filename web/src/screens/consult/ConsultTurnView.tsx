import { AgentReply } from '../../components/AgentReply';
import { ToolsUsed } from '../../components/ToolsUsed';
import { shownText, type StreamingTool } from '../../stores/chat-stream';
import type { ReactNode } from 'react';
import { ErrorAlert } from '../../components/ErrorAlert';
import { useT } from '../../i18n/use-t';
import type { ConsultTurn } from '../../api';
import { useConsultStore, type LiveTurn } from '../../stores/consult';
import { AttachmentImage } from './AttachmentImage';
import { ReplyText } from './ReplyText';

function PatientMessage({ text, image }: { text: string; image?: ReactNode }) {
  const t = useT();
  return (
    <div className="message message-user" data-testid="consult-user-message">
      <div className="message-author">{t('chat.you')}</div>
      {image}
      <div className="message-text">{text}</div>
    </div>
  );
}

/** A turn the consult has recorded: the patient's message (and image) or the consult's answer, with the tools it used when this session saw it written. */
export function RecordedTurn({ turn, tools }: { turn: ConsultTurn; tools?: StreamingTool[] }) {
  const t = useT();
  if (turn.role === 'user') return <PatientMessage text={turn.content} image={turn.attachmentId ? <AttachmentImage attachmentId={turn.attachmentId} /> : undefined} />;
  return (
    <div className="message message-agent">
      <div className="message-author">{t('consult.agentName')}</div>
      <article className="answer" data-testid="consult-reply">
        <ReplyText text={turn.content} />
        {tools ? <ToolsUsed tools={tools} /> : null}
      </article>
    </div>
  );
}

/**
 * The message being answered: the reply as it is written, replaced by the result's response when it arrives (the
 * safety check may have put urgent advice above what was streamed).
 */
export function LiveTurnView({ turn }: { turn: LiveTurn }) {
  const t = useT();
  const text = turn.result ? turn.result.response : shownText(turn.streaming);
  const isWriting = !turn.result && turn.requestError === undefined && !turn.streaming.isStopped;
  // The finished reply is shown with its warnings set apart; the text being written is shown as it comes.
  return (
    <div className="turn">
      <PatientMessage text={turn.input} image={turn.imageUrl ? <img className="consult-image" src={turn.imageUrl} alt={t('consult.image.sent')} /> : undefined} />
      {turn.requestError === undefined || text ? (
        <AgentReply author={t('consult.agentName')} text={turn.result ? '' : text} isWriting={isWriting} isStopped={turn.streaming.isStopped} testId={turn.result ? 'consult-reply' : 'consult-streaming'} workingLabel={t('consult.working')}>
          {turn.result ? <ReplyText text={turn.result.response} /> : null}
          <ToolsUsed tools={turn.streaming.tools} />
        </AgentReply>
      ) : null}
      {turn.requestError !== undefined ? (
        <ErrorAlert
          error={turn.requestError}
          title={t('consult.sendFailed')}
          testId="consult-send-error"
          action={
            // Sent again under the same id: a message the server stored before the failure is not taken twice.
            <button type="button" className="button" data-testid="consult-retry" onClick={() => void useConsultStore.getState().retry()}>
              {t('common.retry')}
            </button>
          }
        />
      ) : null}
    </div>
  );
}
