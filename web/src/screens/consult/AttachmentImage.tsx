import { useEffect } from 'react';
import { useT } from '../../i18n/use-t';
import { useConsultStore } from '../../stores/consult';

/** An image an earlier message carried, from the consult's attachments route (fetched with the bearer token). */
export function AttachmentImage({ attachmentId }: { attachmentId: string }) {
  const t = useT();
  const url = useConsultStore((state) => state.attachmentUrls[attachmentId]);
  const loadAttachment = useConsultStore((state) => state.loadAttachment);

  useEffect(() => {
    void loadAttachment(attachmentId);
  }, [loadAttachment, attachmentId]);

  return url ? (
    <img className="consult-image" src={url} alt={t('consult.image.sent')} data-testid="consult-attachment" />
  ) : (
    <span className="consult-image consult-image-pending muted small">{t('consult.image.loading')}</span>
  );
}
