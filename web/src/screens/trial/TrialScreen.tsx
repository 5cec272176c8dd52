import { useEffect } from 'react';
import type { QcSkill, TrialProject } from '../../api';
import { ErrorAlert } from '../../components/ErrorAlert';
import { Spinner } from '../../components/Spinner';
import type { MessageKey } from '../../i18n/en';
import { useT } from '../../i18n/use-t';
import { routes, type TrialPage } from '../../router';
import { useReviewQueueStore, waitingCount } from '../../stores/review-queue';
import { useRoleIn, WRITER_ROLES } from '../../stores/project-role';
import { useSessionStore } from '../../stores/session';
import { useTrialCatalogStore } from '../../stores/trial-catalog';
import { ProjectPicker } from './ProjectPicker';
import { QcRunsPage } from './QcRunsPage';
import { QueriesPage } from './QueriesPage';
import { RecordPage } from './RecordPage';
import { ReviewQueuePage } from './ReviewQueuePage';
import { TaskRunPage } from './TaskRunPage';
import { AssistantPage } from './assistant/AssistantPage';
import { MemoryPage } from './memory/MemoryPage';
import { ReportsPage } from './reports/ReportsPage';
import { ImportPage } from './import/ImportPage';
import { NewTrialForm } from './import/NewTrialForm';
import { ProjectMembersPage } from '../users/ProjectMembersPage';
import { SkillsPage } from './skills/SkillsPage';

type Tab = 'runs' | 'queries' | 'review' | 'assistant' | 'memory' | 'reports' | 'import' | 'members' | 'skills';
const TABS: Array<{ tab: Tab; label: MessageKey; href: (projectId: string) => string }> = [
  { tab: 'runs', label: 'trial.tab.runs', href: routes.trialRuns },
  { tab: 'queries', label: 'trial.tab.queries', href: routes.trialQueries },
  { tab: 'review', label: 'trial.tab.review', href: routes.trialReview },
  { tab: 'assistant', label: 'trial.tab.assistant', href: routes.trialAssistant },
  { tab: 'memory', label: 'trial.tab.memory', href: routes.trialMemory },
  { tab: 'reports', label: 'trial.tab.reports', href: routes.trialReports },
  { tab: 'import', label: 'trial.tab.import', href: routes.trialImport },
  { tab: 'members', label: 'trial.tab.members', href: routes.trialMembers },
  { tab: 'skills', label: 'trial.tab.skills', href: routes.trialSkills },
];
/** The members list is for admins and PIs (the server answers 403 to others), so only they see its tab. */
const ROLES_SEEING_MEMBERS = new Set(['admin', 'pi']);

/** Detail pages sit under the list they are opened from. */
function tabOf(page: TrialPage): Tab {
  if (page.kind === 'record' || page.kind === 'queries') return 'queries';
  if (page.kind === 'taskRun' || page.kind === 'review') return 'review';
  if (page.kind === 'assistant' || page.kind === 'memory' || page.kind === 'reports' || page.kind === 'import' || page.kind === 'members' || page.kind === 'skills') return page.kind;
  return 'runs';
}

/** The trial quality-control area: a project picker, tabs, and the page the route names. */
export function TrialScreen({ projectId, page }: { projectId: string | null; page: TrialPage }) {
  const t = useT();
  const { projects, skills, hasLoaded, isLoading, error, load } = useTrialCatalogStore();
  const reviewCount = useReviewQueueStore((state) => (state.projectId === projectId && state.hasLoaded ? waitingCount(state) : null));
  const firstProjectId = projects[0]?.id;
  const isAdmin = useSessionStore((state) => state.user?.role === 'admin');
  const role = useRoleIn(projectId) ?? 'viewer';
  const seesMembers = ROLES_SEEING_MEMBERS.has(role);
  // Importing writes the trial's data: a viewer has no Import tab (the server refuses a viewer's preview too).
  const mayImport = WRITER_ROLES.has(role);

  useEffect(() => {
    void load();
  }, [load]);

  // `#/trial` opens the first project; replace() so Back does not return to the empty route.
  useEffect(() => {
    if (projectId === null && firstProjectId) window.location.replace(routes.trialRuns(firstProjectId));
  }, [projectId, firstProjectId]);

  // The queue count in the tab; the review page loads the queue itself, so only load when it has not.
  useEffect(() => {
    if (projectId && useReviewQueueStore.getState().projectId !== projectId) void useReviewQueueStore.getState().load(projectId);
  }, [projectId]);

  const project = projects.find((item) => item.id === projectId);
  const activeTab = tabOf(page);

  return (
    <main className="page trial-page">
      <div className="page-head">
        <div>
          <h1>{t('trial.title')}</h1>
          <p className="muted">{t('trial.intro')}</p>
        </div>
        {isAdmin ? <NewTrialForm /> : null}
      </div>

      {error ? (
        <ErrorAlert
          error={error}
          action={
            <button type="button" className="button" onClick={() => void load()}>
              {t('common.retry')}
            </button>
          }
        />
      ) : null}
      {!hasLoaded && isLoading ? <Spinner label={t('common.loading')} /> : null}
      {hasLoaded && projects.length === 0 ? (
        <p className="empty panel" data-testid="trial-no-projects">
          {t('trial.noProjects')}
        </p>
      ) : null}
      {hasLoaded && projectId && !project && projects.length > 0 ? (
        <>
          <div className="project-bar">
            <ProjectPicker projects={projects} projectId={projectId} page={page} />
          </div>
          <ErrorAlert error={new Error(t('trial.projectNotFound', { id: projectId }))} testId="trial-project-missing" />
        </>
      ) : null}

      {project ? (
        <>
          <div className="project-bar">
            <ProjectPicker projects={projects} projectId={project.id} page={page} />
            <span className="muted small" data-testid="trial-project-summary">
              {t('trial.projectSummary', { subjects: project.subjects, rows: project.rows, sites: project.sites.length })}
            </span>
          </div>
          <nav className="tabs" aria-label={t('trial.title')}>
            {TABS.filter(({ tab }) => (tab !== 'members' || seesMembers) && (tab !== 'import' || mayImport)).map(({ tab, label, href }) => (
              <a
                key={tab}
                href={href(project.id)}
                className={`tab ${activeTab === tab ? 'active' : ''}`}
                aria-current={activeTab === tab && page.kind === tab ? 'page' : undefined}
                data-testid={`trial-tab-${tab}`}
              >
                {t(label)}
                {tab === 'review' && reviewCount ? (
                  <span className="tab-count" data-testid="review-count">
                    {reviewCount}
                  </span>
                ) : null}
              </a>
            ))}
          </nav>
          <TrialPageView key={project.id} project={project} page={page} skills={skills} mayImport={mayImport} />
        </>
      ) : null}
    </main>
  );
}

function TrialPageView({ project, page, skills, mayImport }: { project: TrialProject; page: TrialPage; skills: QcSkill[]; mayImport: boolean }) {
  switch (page.kind) {
    case 'runs':
      return <QcRunsPage projectId={project.id} skills={skills} />;
    case 'queries':
      return <QueriesPage project={project} />;
    case 'review':
      return <ReviewQueuePage projectId={project.id} skills={skills} />;
    case 'record':
      return <RecordPage key={page.recordId} projectId={project.id} recordId={page.recordId} />;
    case 'taskRun':
      return <TaskRunPage key={page.taskRunId} projectId={project.id} taskRunId={page.taskRunId} skills={skills} />;
    case 'assistant':
      return <AssistantPage projectId={project.id} />;
    case 'memory':
      return <MemoryPage projectId={project.id} />;
    case 'reports':
      return <ReportsPage projectId={project.id} />;
    case 'import':
      // Opened by its address as a viewer: say why there is nothing to do here rather than offer refused buttons.
      if (!mayImport) return <ReadOnlyNotice text="trial.import.readOnly" />;
      return <ImportPage projectId={project.id} />;
    case 'members':
      return <ProjectMembersPage projectId={project.id} />;
    case 'skills':
      return <SkillsPage projectId={project.id} skillId={page.skillId} />;
  }
}

function ReadOnlyNotice({ text }: { text: MessageKey }) {
  const t = useT();
  return (
    <p className="panel empty" data-testid="trial-read-only">
      {t(text)}
    </p>
  );
}
