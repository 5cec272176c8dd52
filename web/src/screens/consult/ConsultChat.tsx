import { useEffect, useRef } from 'react';
import type { ConsultSession } from '../../api';
import { useT } from '../../i18n/use-t';
import { useConsultIsRunning, useConsultStore, useLiveTurn } from '../../stores/consult';
import { ChatComposer } from '../chat/ChatComposer';
import { LiveTurnView, RecordedTurn } from './ConsultTurnView';
import { ImageUpload } from './ImageUpload';
import { QuickOptions } from './QuickOptions';

/** The conversation: recorded turns, the reply being written, the answers to tap, and the composer with its photo. */
export function ConsultChat({ session }: { session: ConsultSession }) {
  const t = useT();
  const live = useLiveTurn();
  const isRunning = useConsultIsRunning();
  const toolsUsed = useConsultStore((state) => state.toolsUsed);
  const { send, stop } = useConsultStore.getState();
  const endRef = useRef<HTMLDivElement>(null);

  useEffect(() => {
    endRef.current?.scrollIntoView?.({ block: 'end', behavior: 'smooth' });
  }, [session.turns, live]);

  // The options belong to the last answer: the live one when it is on screen, else the consult's last.
  const options = isRunning ? [] : live ? (live.result?.quickOptions ?? []) : session.quickOptions;
  return (
    <section className="conversation consult-chat" aria-label={t('consult.chatLabel')} aria-live="polite">
      {session.turns.length === 0 && !live ? <p className="empty">{t('consult.chatEmpty')}</p> : null}
      {session.turns.map((turn, index) => (
        <RecordedTurn key={`${index}-${turn.at}`} turn={turn} tools={toolsUsed[index]} />
      ))}
      {live ? <LiveTurnView turn={live} /> : null}
      <QuickOptions options={options} disabled={isRunning} onPick={(option) => void send(option)} />
      {session.status === 'diagnosed' && !isRunning ? <p className="muted small">{t('consult.concluded')}</p> : null}
      {/* The photo goes with the next message, so it sits in the composer's box. */}
      <div className="consult-composer">
        <ImageUpload disabled={isRunning} />
        <ChatComposer isRunning={isRunning} canSend placeholder={t('consult.placeholder')} onSend={(input) => void send(input)} onStop={stop} />
      </div>
      {/* Below the composer: scrolling here leaves it in its place under the last answer instead of over it. */}
      <div ref={endRef} />
    </section>
  );
}
