/**
 * The SPIRIT 2025 checklist: the minimum content of a randomised trial's protocol. Source: Chan A-W, Boutron I,
 * Hopewell S, Moher D, Schulz KF, Collins GS, et al. SPIRIT 2025 statement: updated guideline for protocols of
 * randomised trials. BMJ 2025;389:e081477 (doi:10.1136/bmj-2024-081477), published at once in JAMA, The Lancet,
 * Nature Medicine and PLOS Medicine; wording checked against the item headings of the SPIRIT 2025 explanation and
 * elaboration (BMJ 2025, doi:10.1136/bmj-2024-081660).
 *
 * 34 numbered items, 53 rows once sub-items (1a, 1b, ...) are counted. Titles are short paraphrases, not the
 * publication's wording: the checklist is what a reviewer should read for the full item.
 */

export interface SpiritItem {
  /** The item number as published: "10", "14a". */
  id: string;
  section: string;
  title: string;
}

/** Numbered items in the publication; sub-items share their number. */
export const SPIRIT_2025_ITEM_COUNT = 34;

const ADMIN = 'Administrative information';
const OPEN_SCIENCE = 'Open science';
const INTRODUCTION = 'Introduction';
const PPI_DESIGN = 'Methods: Patient and public involvement, trial design';
const PARTICIPANTS = 'Methods: Participants, interventions, and outcomes';
const ASSIGNMENT = 'Methods: Assignment of interventions';
const DATA = 'Methods: Data collection, management, and analysis';
const MONITORING = 'Methods: Monitoring';
const ETHICS = 'Ethics';

const rows: Array<[id: string, section: string, title: string]> = [
  ['1a', ADMIN, 'Title naming the trial design, population and interventions, identified as a protocol'],
  ['1b', ADMIN, 'Structured summary of design and methods, with the WHO Trial Registration Data Set items'],
  ['2', ADMIN, 'Protocol version date and identifier'],
  ['3a', ADMIN, 'Names, affiliations and roles of protocol contributors'],
  ['3b', ADMIN, "Trial sponsor's name and contact information"],
  ['3c', ADMIN, 'Role and any authority of the sponsor and funders in design, conduct, analysis and reporting'],
  ['3d', ADMIN, 'Composition, roles and responsibilities of the coordinating site, committees and other groups overseeing the trial'],
  ['4', OPEN_SCIENCE, 'Trial registry, registration number (with URL) and date, or the registry intended'],
  ['5', OPEN_SCIENCE, 'Where the protocol and the statistical analysis plan can be accessed'],
  ['6', OPEN_SCIENCE, 'Where and how de-identified participant data, data dictionary, statistical code and other materials will be accessible'],
  ['7a', OPEN_SCIENCE, 'Sources of funding and other support (e.g. supply of drugs)'],
  ['7b', OPEN_SCIENCE, 'Financial and other conflicts of interest of principal investigators and steering committee members'],
  ['8', OPEN_SCIENCE, 'Plans to communicate results to participants, healthcare professionals, the public and other groups'],
  ['9a', INTRODUCTION, 'Scientific background and rationale, summarising relevant studies of benefits and harms'],
  ['9b', INTRODUCTION, 'Explanation for the choice of comparator'],
  ['10', INTRODUCTION, 'Specific objectives related to benefits and harms'],
  ['11', PPI_DESIGN, 'How patients or the public are, or will be, involved in design, conduct and reporting'],
  ['12', PPI_DESIGN, 'Trial design: type of trial, allocation ratio and framework (superiority, equivalence, non-inferiority, exploratory)'],
  ['13', PARTICIPANTS, 'Settings and locations where the trial will be conducted'],
  ['14a', PARTICIPANTS, 'Eligibility criteria for participants'],
  ['14b', PARTICIPANTS, 'Eligibility criteria for sites and for those who deliver the interventions, if applicable'],
  ['15a', PARTICIPANTS, 'Intervention and comparator in enough detail to replicate them: how, when and by whom'],
  ['15b', PARTICIPANTS, "Criteria for discontinuing or modifying a participant's allocated intervention or comparator"],
  ['15c', PARTICIPANTS, 'Strategies to improve adherence, and procedures for monitoring it'],
  ['15d', PARTICIPANTS, 'Concomitant care permitted or prohibited during the trial'],
  ['16', PARTICIPANTS, 'Primary and secondary outcomes: measurement variable, analysis metric, method of aggregation and time point'],
  ['17', PARTICIPANTS, 'How harms are defined and will be assessed'],
  ['18', PARTICIPANTS, 'Participant timeline: schedule of enrolment, interventions, assessments and visits (a diagram is recommended)'],
  ['19', PARTICIPANTS, 'How the sample size was determined, with all the assumptions behind the calculation'],
  ['20', PARTICIPANTS, 'Strategies for reaching the target enrolment'],
  ['21a', ASSIGNMENT, 'Who will generate the random allocation sequence, and the method used'],
  ['21b', ASSIGNMENT, 'Type of randomisation and any stratification factors (restriction details kept in a separate document)'],
  ['22', ASSIGNMENT, 'Allocation concealment mechanism: how the sequence is implemented and kept concealed until assignment'],
  ['23', ASSIGNMENT, 'Whether those who enrol and those who assign participants will have access to the allocation sequence'],
  ['24a', ASSIGNMENT, 'Who will be blinded after assignment to interventions'],
  ['24b', ASSIGNMENT, 'If blinded, how blinding will be achieved and how similar the interventions are'],
  ['24c', ASSIGNMENT, "If blinded, when unblinding is permissible and how a participant's allocation is revealed"],
  ['25a', DATA, 'Plans for assessing and collecting trial data, data quality processes, and instruments with their reliability and validity'],
  ['25b', DATA, 'Plans to promote retention and complete follow-up, including data collected after discontinuation or deviation'],
  ['26', DATA, 'Data management: entry, coding, security and storage, with data quality processes'],
  ['27a', DATA, 'Statistical methods comparing groups for primary and secondary outcomes, including harms'],
  ['27b', DATA, 'Who will be included in each analysis, and in which group'],
  ['27c', DATA, 'How missing data will be handled in the analysis'],
  ['27d', DATA, 'Methods for any additional analyses (e.g. subgroup and sensitivity analyses)'],
  ['28a', MONITORING, 'Data monitoring committee: composition, role, reporting, independence and charter, or why none is needed'],
  ['28b', MONITORING, 'Interim analyses and stopping guidelines, and who sees the results and decides to stop'],
  ['29', MONITORING, 'Frequency and procedures for monitoring trial conduct, or why there is none'],
  ['30', ETHICS, 'Plans for seeking research ethics committee / institutional review board approval'],
  ['31', ETHICS, 'Plans for communicating important protocol amendments to relevant parties'],
  ['32a', ETHICS, 'Who will obtain informed consent or assent, and how'],
  ['32b', ETHICS, 'Additional consent for using participant data and biological specimens in ancillary studies, if applicable'],
  ['33', ETHICS, 'How personal information will be collected, shared and kept confidential before, during and after the trial'],
  ['34', ETHICS, 'Provisions for ancillary and post-trial care, and compensation for harm from trial participation'],
];

/** Every row of the checklist, sub-items included, in the publication's order. */
export const SPIRIT_2025_ITEMS: readonly SpiritItem[] = Object.freeze(rows.map(([id, section, title]) => Object.freeze({ id, section, title })));
