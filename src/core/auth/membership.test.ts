import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase, testEngines } from '../../testing/test-database.js';
import type { Database } from '../db/connect.js';
import { users } from '../db/schema/auth.js';
import { createMembershipStore } from './membership.js';
import { createProjectStore } from './projects.js';
import type { User } from './users.js';

/** Projects and membership need only the database: no user store, no token settings. */
describe.each(testEngines())('projects and membership on %s', (engine) => {
  let database: Database;
  let coordinator: User;
  const admin: User = { id: '00000000-0000-4000-8000-000000000001', name: 'operator', role: 'admin' };

  beforeAll(async () => {
    database = await openTestDatabase({ engine });
    const [row] = await database.db.insert(users).values({ name: 'crc-chen', role: 'coordinator' }).returning();
    coordinator = { id: row!.id, name: row!.name, role: 'coordinator' };
  });

  afterAll(async () => {
    await database?.close();
  });

  it('lets a member see only their projects, while an admin belongs to every project', async () => {
    const projects = createProjectStore(database.db);
    const membership = createMembershipStore(database.db);
    await projects.createProject({ id: 'htn-01', name: 'Hypertension 01' }, 'operator');
    await projects.createProject({ id: 'dm-02', name: 'Diabetes 02' }, 'operator');
    await membership.addMember('htn-01', coordinator.id, 'operator');
    await membership.addMember('htn-01', coordinator.id, 'operator');

    expect(await membership.isMember('htn-01', coordinator)).toBe(true);
    expect(await membership.isMember('dm-02', coordinator)).toBe(false);
    expect(await membership.isMember('dm-02', admin)).toBe(true);
    expect(await membership.projectIds(coordinator.id)).toEqual(['htn-01']);
    expect(await projects.listProjects(coordinator)).toEqual([{ id: 'htn-01', name: 'Hypertension 01' }]);
    expect((await projects.listProjects(admin)).map((p) => p.id)).toEqual(['dm-02', 'htn-01']);
  });

  it('counts a trial role that writes (data_manager, coordinator, pi), and not viewer, as writing in some project', async () => {
    const projects = createProjectStore(database.db);
    const membership = createMembershipStore(database.db);
    await projects.createProject({ id: 'onc-03', name: 'Oncology 03' }, 'operator');
    const member = async (name: string, role: 'data_manager' | 'viewer') => {
      const [row] = await database.db.insert(users).values({ name, role: 'viewer' }).returning();
      const user: User = { id: row!.id, name, role: 'viewer' };
      await membership.addMember('onc-03', user.id, 'operator', role);
      return user;
    };
    expect(await membership.writesInSomeProject(await member('dm-li', 'data_manager'))).toBe(true);
    expect(await membership.writesInSomeProject(await member('monitor-sun', 'viewer'))).toBe(false);
  });

  it('refuses a member for an unknown project or user, naming which', async () => {
    const membership = createMembershipStore(database.db);
    await expect(membership.addMember('no-such-trial', coordinator.id)).rejects.toMatchObject({ code: 'NOT_FOUND', details: { projectId: 'no-such-trial' } });
    await expect(membership.addMember('htn-01', 'not-a-uuid')).rejects.toMatchObject({ code: 'NOT_FOUND', details: { userId: 'not-a-uuid' } });
  });
});
