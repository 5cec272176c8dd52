import { useState, type ChangeEvent } from 'react';
import { useT } from '../../i18n/use-t';
import { useConsultStore } from '../../stores/consult';
import { formatFileSize, IMAGE_ACCEPT, imageProblem } from './image-file';

/**
 * Attaching a photo of the skin to the next message, with a preview before it is sent. Only JPEG, PNG and WebP are
 * offered; the server checks the bytes and its size limit, and its refusal shows under the message.
 */
export function ImageUpload({ disabled }: { disabled: boolean }) {
  const t = useT();
  const image = useConsultStore((state) => state.image);
  const { chooseImage, clearImage } = useConsultStore.getState();
  const [refused, setRefused] = useState<string | null>(null);

  function onChange(event: ChangeEvent<HTMLInputElement>) {
    const file = event.target.files?.[0];
    // The same file may be chosen again after removing it; an emptied input fires change again.
    event.target.value = '';
    if (!file) return;
    if (imageProblem(file)) {
      setRefused(file.name);
      clearImage();
      return;
    }
    setRefused(null);
    chooseImage(file);
  }

  return (
    <div className="image-upload">
      <input id="consult-image" type="file" accept={IMAGE_ACCEPT} className="visually-hidden" onChange={onChange} disabled={disabled} />
      <label htmlFor="consult-image" className={`button button-small${disabled ? ' button-disabled' : ''}`}>
        <span aria-hidden="true">📷 </span>
        {t('consult.image.attach')}
      </label>
      <span className="muted small">{t('consult.image.accepted')}</span>
      {refused ? (
        <p className="field-error" role="alert">
          {t('consult.image.wrongType', { name: refused })}
        </p>
      ) : null}
      {image ? (
        <figure className="image-preview" data-testid="image-preview">
          <img src={image.previewUrl} alt={t('consult.image.preview')} />
          <figcaption className="small">
            {image.file.name} · {formatFileSize(image.file.size)}
            <button type="button" className="link-button small" onClick={clearImage}>
              {t('consult.image.remove')}
            </button>
          </figcaption>
        </figure>
      ) : null}
    </div>
  );
}
