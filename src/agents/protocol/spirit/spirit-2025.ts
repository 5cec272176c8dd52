/**
 * The SPIRIT 2025 checklist: the minimum content of a randomised trial's protocol. Source: Chan A-W, Boutron I,
 * Hopewell S, Moher D, Schulz KF, Collins GS, et al. SPIRIT 2025 statement: updated guideline for protocols of
 * randomised trials. BMJ 2025;389:e081477 (doi:10.1136/bmj-2024-081477), published at once in JAMA, The Lancet,
 * Nature Medicine and PLOS Medicine; wording checked against the item headings of the SPIRIT 2025 explanation and
 * elaboration (BMJ 2025, doi:10.1136/bmj-2024-081660).
 *
 * 34 numbered items, 53 rows once sub-items (1a, 1b, ...) are counted. Each title is the item's full published
 * wording (the BMJ's, as the explanation and elaboration heads each item): a committee reading the export reads
 * the item it is checked against, with no part of it dropped.
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
  ['1a', ADMIN, 'Title stating the trial design, population, and interventions, with identification as a protocol'],
  ['1b', ADMIN, 'Structured summary of trial design and methods, including items from the World Health Organization Trial Registration Data Set'],
  ['2', ADMIN, 'Version date and identifier'],
  ['3a', ADMIN, 'Names, affiliations, and roles of protocol contributors'],
  ['3b', ADMIN, 'Name and contact information for the trial sponsor'],
  ['3c', ADMIN, 'Role of trial sponsor and funders in design, conduct, analysis, and reporting of trial; including any authority over these activities'],
  ['3d', ADMIN, 'Composition, roles, and responsibilities of the coordinating site, steering committee, endpoint adjudication committee, data management team, and other individuals or groups overseeing the trial, if applicable'],
  ['4', OPEN_SCIENCE, 'Name of trial registry, identifying number (with URL), and date of registration. If not yet registered, name of intended registry'],
  ['5', OPEN_SCIENCE, 'Where the trial protocol and statistical analysis plan can be accessed'],
  ['6', OPEN_SCIENCE, 'Where and how the individual deidentified participant data (including data dictionary), statistical code, and any other materials will be accessible'],
  ['7a', OPEN_SCIENCE, 'Sources of funding and other support (eg, supply of drugs)'],
  ['7b', OPEN_SCIENCE, 'Financial and other conflicts of interest for principal investigators and steering committee members'],
  ['8', OPEN_SCIENCE, 'Plans to communicate trial results to participants, healthcare professionals, the public, and other relevant groups (eg, reporting in trial registry, plain language summary, publication)'],
  ['9a', INTRODUCTION, 'Scientific background and rationale, including summary of relevant studies (published and unpublished) examining benefits and harms for each intervention'],
  ['9b', INTRODUCTION, 'Explanation for choice of comparator'],
  ['10', INTRODUCTION, 'Specific objectives related to benefits and harms'],
  ['11', PPI_DESIGN, 'Details of, or plans for, patient or public involvement in the design, conduct, and reporting of the trial'],
  ['12', PPI_DESIGN, 'Description of trial design including type of trial (eg, parallel group, crossover), allocation ratio, and framework (eg, superiority, equivalence, non-inferiority, exploratory)'],
  ['13', PARTICIPANTS, 'Settings (eg, community, hospital) and locations (eg, countries, sites) where the trial will be conducted'],
  ['14a', PARTICIPANTS, 'Eligibility criteria for participants'],
  ['14b', PARTICIPANTS, 'If applicable, eligibility criteria for sites and for individuals who will deliver the interventions (eg, surgeons, physiotherapists)'],
  ['15a', PARTICIPANTS, 'Intervention and comparator with sufficient details to allow replication including how, when, and by whom they will be administered. If relevant, where additional materials describing the intervention and comparator (eg, intervention manual) can be accessed'],
  ['15b', PARTICIPANTS, 'Criteria for discontinuing or modifying allocated intervention/comparator for a trial participant (eg, drug dose change in response to harms, participant request, or improving/worsening disease)'],
  ['15c', PARTICIPANTS, 'Strategies to improve adherence to intervention/comparator protocols, if applicable, and any procedures for monitoring adherence (eg, drug tablet return, sessions attended)'],
  ['15d', PARTICIPANTS, 'Concomitant care that is permitted or prohibited during the trial'],
  ['16', PARTICIPANTS, 'Primary and secondary outcomes, including the specific measurement variable (eg, systolic blood pressure), analysis metric (eg, change from baseline, final value, time to event), method of aggregation (eg, median, proportion), and time point for each outcome'],
  ['17', PARTICIPANTS, 'How harms are defined and will be assessed (eg, systematically, non-systematically)'],
  ['18', PARTICIPANTS, 'Time schedule of enrolment, interventions (including any run-ins and washouts), assessments, and visits for participants. A schematic diagram is highly recommended (see Figure)'],
  ['19', PARTICIPANTS, 'How sample size was determined, including all assumptions supporting the sample size calculation'],
  ['20', PARTICIPANTS, 'Strategies for achieving adequate participant enrolment to reach target sample size'],
  ['21a', ASSIGNMENT, 'Who will generate the random allocation sequence and the method used'],
  ['21b', ASSIGNMENT, 'Type of randomisation (simple or restricted) and details of any factors for stratification. To reduce predictability of a random sequence, other details of any planned restriction (eg, blocking) should be provided in a separate document that is unavailable to those who enrol participants or assign interventions'],
  ['22', ASSIGNMENT, 'Mechanism used to implement the random allocation sequence (eg, central computer/telephone; sequentially numbered, opaque, sealed containers), describing any steps to conceal the sequence until interventions are assigned'],
  ['23', ASSIGNMENT, 'Whether the personnel who will enrol and those who will assign participants to the interventions will have access to the random allocation sequence'],
  ['24a', ASSIGNMENT, 'Who will be blinded after assignment to interventions (eg, participants, care providers, outcome assessors, data analysts)'],
  ['24b', ASSIGNMENT, 'If blinded, how blinding will be achieved and description of the similarity of interventions'],
  ['24c', ASSIGNMENT, 'If blinded, circumstances under which unblinding is permissible, and procedure for revealing a participant’s allocated intervention during the trial'],
  ['25a', DATA, 'Plans for assessment and collection of trial data, including any related processes to promote data quality (eg, duplicate measurements, training of assessors) and a description of trial instruments (eg, questionnaires, laboratory tests) along with their reliability and validity, if known. Reference to where data collection forms can be accessed, if not in the protocol'],
  ['25b', DATA, 'Plans to promote participant retention and complete follow-up, including list of any outcome data to be collected for participants who discontinue or deviate from intervention protocols'],
  ['26', DATA, 'Plans for data entry, coding, security, and storage, including any related processes to promote data quality (eg, double data entry; range checks for data values). Reference to where details of data management procedures can be accessed, if not in the protocol'],
  ['27a', DATA, 'Statistical methods used to compare groups for primary and secondary outcomes, including harms'],
  ['27b', DATA, 'Definition of who will be included in each analysis (eg, all randomised participants), and in which group'],
  ['27c', DATA, 'How missing data will be handled in the analysis'],
  ['27d', DATA, 'Methods for any additional analyses (eg, subgroup and sensitivity analyses)'],
  ['28a', MONITORING, 'Composition of data monitoring committee (DMC); summary of its role and reporting structure; statement of whether it is independent from the sponsor and funder; conflicts of interest and reference to where further details about its charter can be found, if not in the protocol. Alternatively, an explanation of why a DMC is not needed'],
  ['28b', MONITORING, 'Explanation of any interim analyses and stopping guidelines, including who will have access to these interim results and make the final decision to terminate the trial'],
  ['29', MONITORING, 'Frequency and procedures for monitoring trial conduct. If there is no monitoring, give explanation'],
  ['30', ETHICS, 'Plans for seeking research ethics committee/institutional review board approval'],
  ['31', ETHICS, 'Plans for communicating important protocol modifications to relevant parties'],
  ['32a', ETHICS, 'Who will obtain informed consent or assent from potential trial participants or authorised proxies, and how'],
  ['32b', ETHICS, 'Additional consent provisions for collection and use of participant data and biological specimens in ancillary studies, if applicable'],
  ['33', ETHICS, 'How personal information about potential and enrolled participants will be collected, shared, and maintained in order to protect confidentiality before, during, and after the trial'],
  ['34', ETHICS, 'Provisions, if any, for ancillary and post-trial care, and for compensation to those who suffer harm from trial participation'],
];

/** Every row of the checklist, sub-items included, in the publication's order. */
export const SPIRIT_2025_ITEMS: readonly SpiritItem[] = Object.freeze(rows.map(([id, section, title]) => Object.freeze({ id, section, title })));
