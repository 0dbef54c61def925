import type { ReferenceTable } from './intrinsics';
import { LOCAL_ACCOUNT_ID, type CfnTemplate } from './model';

/**
 * The local meaning of every logical id: what `Ref` returns and its
 * `Fn::GetAtt` attributes. Emulated resources register their real local values
 * (table names, queue URLs, stream ARNs); anything else gets a stable,
 * well-formed placeholder, so that an environment variable naming, say, an SNS
 * topic still resolves (the runtime lists such resources as not emulated).
 */
export class LocalReferences implements ReferenceTable {
  private readonly values = new Map<string, { ref: string; attributes: Record<string, string> }>();

  constructor(
    private readonly template: CfnTemplate,
    readonly region: string,
    readonly stackName: string,
  ) {}

  register(logicalId: string, ref: string, attributes: Record<string, string> = {}): void {
    this.values.set(logicalId, { ref, attributes });
  }

  ref(logicalId: string): string | undefined {
    const known = this.values.get(logicalId);
    if (known !== undefined) return known.ref;
    const resource = this.template.Resources[logicalId];
    if (resource === undefined) return undefined;
    // SNS topics (and a few others) return their ARN from Ref.
    return resource.Type === 'AWS::SNS::Topic' ? this.placeholderArn(logicalId) : this.placeholderName(logicalId);
  }

  getAtt(logicalId: string, attribute: string): string | undefined {
    const known = this.values.get(logicalId);
    if (known !== undefined && attribute in known.attributes) return known.attributes[attribute];
    if (this.template.Resources[logicalId] === undefined) return undefined;
    if (attribute === 'Arn' || attribute.endsWith('Arn')) return this.placeholderArn(logicalId);
    return this.placeholderName(logicalId);
  }

  arn(service: string, resource: string): string {
    return `arn:aws:${service}:${this.region}:${LOCAL_ACCOUNT_ID}:${resource}`;
  }

  pseudoParameters(): Record<string, string> {
    return {
      'AWS::AccountId': LOCAL_ACCOUNT_ID,
      'AWS::Region': this.region,
      'AWS::Partition': 'aws',
      'AWS::URLSuffix': 'amazonaws.com',
      'AWS::StackName': this.stackName,
      'AWS::StackId': this.arn('cloudformation', `stack/${this.stackName}/local`),
      'AWS::NoValue': '',
    };
  }

  private placeholderName(logicalId: string): string {
    return `${this.stackName}-${logicalId}`;
  }

  private placeholderArn(logicalId: string): string {
    const type = this.template.Resources[logicalId]?.Type ?? 'AWS::Unknown::Resource';
    const service = type.split('::')[1]?.toLowerCase() ?? 'unknown';
    return this.arn(service, this.placeholderName(logicalId));
  }
}
