import { replyBlocks } from './reply-blocks';

/** A consult reply with the server's warnings (risk advice, a medicine taken out) shown as warnings, not as more text. */
export function ReplyText({ text }: { text: string }) {
  return (
    <div className="consult-reply-text">
      {replyBlocks(text).map((block, index) =>
        block.kind === 'warning' ? (
          <p key={index} className="consult-warning" role="note" data-testid="consult-warning">
            {block.text}
          </p>
        ) : (
          <p key={index} className="answer-text">
            {block.text}
          </p>
        ),
      )}
    </div>
  );
}
