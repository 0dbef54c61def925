import { PROJECT_TAG } from '../../lib/app-stack';
import { synthStack } from '../support/synth';

/**
 * Cost allocation: every resource that takes tags carries `project` and `stage`, so a load test's or
 * a stage's bill can be told apart once the tags are activated in Billing.
 */
const TAGGED_TYPES = [
  'AWS::DynamoDB::Table',
  'AWS::SQS::Queue',
  'AWS::Lambda::Function',
  'AWS::IAM::Role',
  'AWS::SNS::Topic',
  'AWS::KMS::Key',
  'AWS::Logs::LogGroup',
];

test.each([['dev'], ['prod']])(
  '%s: every table, queue, function, role, topic, key and log group carries project and stage',
  (stage) => {
    const resources = Object.entries(
      synthStack({ stage }).template.toJSON().Resources as Record<
        string,
        { Type: string; Properties?: { Tags?: unknown } }
      >,
    ).filter(([, r]) => TAGGED_TYPES.includes(r.Type));

    const untagged = resources
      .filter(([, r]) => {
        const tags = (r.Properties?.Tags ?? []) as { Key: string; Value: string }[];
        const has = (key: string, value: string) => tags.some((t) => t.Key === key && t.Value === value);
        return !(has('project', PROJECT_TAG) && has('stage', stage));
      })
      .map(([id, r]) => `${r.Type} ${id}`);

    expect(resources.length).toBeGreaterThan(20);
    expect(untagged).toEqual([]);
  },
);
