/** REDCap logic as a tree, before it becomes JSON Logic. Positions are 1-based characters of the logic. */
export type Node =
  | { type: 'number'; value: number; position: number }
  | { type: 'string'; value: string; position: number }
  | { type: 'boolean'; value: boolean; position: number }
  /** `path` is how the record holds it: `age`, `enrollment_arm_1.consent_date`, `gym___1`. */
  | { type: 'ref'; path: string; text: string; position: number }
  | { type: 'compare'; operator: ComparisonOperator; left: Node; right: Node; position: number }
  | { type: 'arithmetic'; operator: '+' | '-' | '*' | '/'; left: Node; right: Node; position: number }
  | { type: 'negate'; operand: Node; position: number }
  | { type: 'logical'; operator: 'and' | 'or'; operands: Node[]; position: number }
  | { type: 'not'; operand: Node; position: number }
  | { type: 'call'; name: string; args: Node[]; position: number };

export type ComparisonOperator = '=' | '<>' | '<' | '<=' | '>' | '>=';
