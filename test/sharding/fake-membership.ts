// The sharding tests' controllable membership: the shared FakeCluster of test/support/, under its old path.
export { FakeCluster, type MemberSpec } from '../support/fake-membership.js';
