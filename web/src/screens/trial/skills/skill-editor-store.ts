import { create } from 'zustand';
import { api } from '../../../api';
import type { Translate } from '../../../i18n/translate';
import type { SkillDetail, SkillDryRunResult, SkillValidation, SkillVersionSummary, SkillVersionView } from '../../../api/skills-api';
import { replaceWord } from './replace-word';
import { newSkillTemplate, templateFieldOf } from './skill-template';

export type EditorBusy = 'load' | 'validate' | 'save' | 'activate' | 'dryRun' | null;
export type EditorOutcome = { kind: 'saved' | 'activated'; version: number } | null;

interface SkillEditorState {
  /** null: a new skill, not saved yet. */
  skillId: string | null;
  detail: SkillDetail | null;
  versions: SkillVersionSummary[];
  text: string;
  /** What the server holds for the text in the editor, to show unsaved changes. */
  savedText: string;
  /** An earlier version shown read-only instead of the editor. */
  viewing: SkillVersionView | null;
  validation: SkillValidation | null;
  dryRun: SkillDryRunResult | null;
  dryRunError: unknown;
  busy: EditorBusy;
  error: unknown;
  outcome: EditorOutcome;
  /** Opens a skill, or (null) a new one from a template built on a field of this trial's dictionary, in the console's language. */
  open(skillId: string | null, projectId: string, t: Translate): Promise<void>;
  setText(text: string): void;
  validate(projectId: string): Promise<void>;
  /** Saves a draft; the skill id it was saved under (a new skill's comes from its YAML). */
  save(comment: string): Promise<string | null>;
  activate(comment: string): Promise<boolean>;
  runDry(projectId: string, recordId: string): Promise<void>;
  view(version: number): Promise<void>;
  closeView(copy: boolean): void;
  applySuggestion(word: string, suggestion: string): void;
}

const CLEAR = { validation: null, dryRun: null, dryRunError: null, error: null, outcome: null } as const;

/** One skill in the editor: its text, versions, and what the last validate, save, activate or dry run said. */
export const useSkillEditorStore = create<SkillEditorState>()((set, get) => {
  async function act<T>(busy: Exclude<EditorBusy, null>, call: () => Promise<T>): Promise<T | undefined> {
    if (get().busy) return undefined;
    set({ busy, error: null, outcome: null });
    try {
      return await call();
    } catch (error) {
      set({ error });
      return undefined;
    } finally {
      set({ busy: null });
    }
  }

  async function reload(skillId: string): Promise<void> {
    const [detail, versions] = await Promise.all([api.skills.get(skillId), api.skills.versions(skillId)]);
    const shown = detail.draft ?? detail.active;
    set({ detail, versions, text: shown?.yaml ?? '', savedText: shown?.yaml ?? '' });
  }

  return {
    skillId: null, detail: null, versions: [], text: '', savedText: '', viewing: null, busy: null, ...CLEAR,

    async open(skillId, projectId, t) {
      const placeholder = newSkillTemplate(projectId, null, t);
      set({ skillId, detail: null, versions: [], viewing: null, busy: null, ...CLEAR, text: skillId ? '' : placeholder, savedText: '' });
      if (skillId) {
        await act('load', () => reload(skillId));
        return;
      }
      // The dictionary is read from the first record's CRF; the template is swapped in only if nothing was typed yet.
      try {
        const [first] = await api.trial.listRecords(projectId, 1);
        const crf = first ? (await api.trial.getRecord(projectId, first.recordId)).crf : null;
        const template = newSkillTemplate(projectId, templateFieldOf(crf), t);
        if (get().skillId === null && get().text === placeholder) set({ text: template });
      } catch {
        // A trial whose records cannot be read keeps the placeholder, which says what to name.
      }
    },
    setText: (text) => set({ text }),
    async validate(projectId) {
      const validation = await act('validate', () => api.skills.validate(get().text, projectId));
      if (validation) set({ validation });
    },
    async save(comment) {
      const { skillId, text } = get();
      const saved = await act('save', () => (skillId ? api.skills.saveDraft(skillId, text, comment) : api.skills.create(text, comment)));
      if (!saved) return null;
      set({ skillId: saved.skillId, validation: saved.validation, outcome: { kind: 'saved', version: saved.version } });
      await act('load', () => reload(saved.skillId));
      set({ validation: saved.validation, outcome: { kind: 'saved', version: saved.version } });
      return saved.skillId;
    },
    async activate(comment) {
      const { skillId } = get();
      if (!skillId) return false;
      const result = await act('activate', () => api.skills.activate(skillId, undefined, comment));
      if (!result) return false;
      await act('load', () => reload(skillId));
      set({ outcome: { kind: 'activated', version: result.activated.version } });
      return true;
    },
    async runDry(projectId, recordId) {
      if (get().busy) return;
      set({ busy: 'dryRun', dryRun: null, dryRunError: null });
      try {
        set({ dryRun: await api.skills.dryRun(projectId, get().text, recordId.trim() || undefined) });
      } catch (dryRunError) {
        // Shown as it comes, a 404 included: the dry-run route may not be on this server yet.
        set({ dryRunError });
      } finally {
        set({ busy: null });
      }
    },
    async view(version) {
      const { skillId } = get();
      if (!skillId) return;
      const viewing = await act('load', () => api.skills.version(skillId, version));
      if (viewing) set({ viewing });
    },
    closeView(copy) {
      const { viewing } = get();
      set({ viewing: null, ...(copy && viewing ? { text: viewing.yaml } : {}) });
    },
    applySuggestion(word, suggestion) {
      const { text, validation } = get();
      set({
        text: replaceWord(text, word, suggestion),
        // The problem is fixed in the text; the others stay listed until the next validation.
        validation: validation ? { ...validation, problems: validation.problems.filter((p) => !(p.word === word && p.suggestion === suggestion)) } : null,
      });
    },
  };
});
