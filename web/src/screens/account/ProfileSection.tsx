import { useEffect, useState, type FormEvent } from 'react';
import type { UserProfile } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import { useT } from '../../i18n/use-t';
import { useProfileStore } from '../../stores/profile';

const DETAIL_LEVELS: ReadonlyArray<UserProfile['detailLevel']> = ['brief', 'standard', 'detailed'];
const LANGUAGES: ReadonlyArray<UserProfile['language']> = ['auto', 'zh', 'en'];

/** The form, filled from the saved profile; keyed by its updatedAt so a save or reload refills it. */
function ProfileForm({ profile }: { profile: UserProfile }) {
  const t = useT();
  const { isSaving, saveError, savedAt, save } = useProfileStore();
  const [detailLevel, setDetailLevel] = useState(profile.detailLevel);
  const [language, setLanguage] = useState(profile.language);
  const [roleTitle, setRoleTitle] = useState(profile.roleTitle);
  const isChanged = detailLevel !== profile.detailLevel || language !== profile.language || roleTitle.trim() !== profile.roleTitle;

  function submit(event: FormEvent) {
    event.preventDefault();
    if (isChanged) void save({ detailLevel, language, roleTitle: roleTitle.trim() });
  }

  return (
    <form className="profile-form" onSubmit={submit} data-testid="profile-form">
      <label className="filter">
        {t('profile.detailLevel')}
        <select data-testid="profile-detail" value={detailLevel} onChange={(event) => setDetailLevel(event.target.value as UserProfile['detailLevel'])}>
          {DETAIL_LEVELS.map((level) => (
            <option key={level} value={level}>
              {t(`profile.detail.${level}`)}
            </option>
          ))}
        </select>
      </label>
      <label className="filter">
        {t('profile.language')}
        <select data-testid="profile-language" value={language} onChange={(event) => setLanguage(event.target.value as UserProfile['language'])}>
          {LANGUAGES.map((value) => (
            <option key={value} value={value}>
              {t(`profile.language.${value}`)}
            </option>
          ))}
        </select>
      </label>
      <label className="filter">
        {t('profile.roleTitle')}
        <input
          type="text"
          data-testid="profile-role-title"
          maxLength={60}
          placeholder={t('profile.roleTitlePlaceholder')}
          value={roleTitle}
          onChange={(event) => setRoleTitle(event.target.value)}
        />
      </label>
      <div className="profile-actions">
        <button type="submit" className="button button-primary button-small" data-testid="profile-save" disabled={isSaving || !isChanged}>
          {isSaving ? t('common.saving') : t('profile.save')}
        </button>
        {savedAt && !isChanged ? (
          <span className="muted small" role="status" data-testid="profile-saved">
            {t('profile.saved')}
          </span>
        ) : null}
      </div>
      {saveError ? <ErrorAlert error={saveError} title={t('profile.saveFailed')} testId="profile-error" /> : null}
    </form>
  );
}

/** How the trial assistant answers the signed-in user: detail level, language and their role in the trial. */
export function ProfileSection() {
  const t = useT();
  const { profile, isLoading, error, load } = useProfileStore();

  useEffect(() => {
    void load();
  }, [load]);

  return (
    <section className="panel section" aria-labelledby="profile-title" data-testid="profile-section">
      <div className="section-head">
        <div>
          <h2 id="profile-title">{t('profile.title')}</h2>
          <p className="muted small">{t('profile.intro')}</p>
        </div>
      </div>
      {error ? <ErrorAlert error={error} /> : null}
      {!profile && isLoading ? <Spinner label={t('common.loading')} /> : null}
      {profile ? <ProfileForm key={profile.updatedAt ?? 'default'} profile={profile} /> : null}
    </section>
  );
}
