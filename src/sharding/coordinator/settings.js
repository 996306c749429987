import { oldestUpMember } from '../../cluster/member-order.js';
/** Which node runs the coordinator of a type: the cluster's singleton placement, the oldest Up member with the role. */
export function coordinatorNode(members, role) {
    return oldestUpMember(members, role);
}
//# sourceMappingURL=settings.js.map