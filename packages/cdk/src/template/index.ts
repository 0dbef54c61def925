/**
 * Reading a synthesized CloudFormation template, CDK-free: the one reader the
 * correctness aspects and the local runtime share.
 */
export * from './resources';
export * from './values';
