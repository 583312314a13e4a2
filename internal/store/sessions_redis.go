package store

import (
	"encoding/json"
	"fmt"
)

// Sessions, tasks and conversations in Redis: a record (JSON) per key, and for sessions
// and tasks a set of their ids (mcpgw:sessions, mcpgw:tasks) that List and ListTasks read.

func sessionKey(id string) string { return "mcpgw:session:" + keyEscaper.Replace(id) }

func taskKey(id string) string { return "mcpgw:task:" + keyEscaper.Replace(id) }

func convKeyRedis(a, id string) string {
	return "mcpgw:conv:" + keyEscaper.Replace(a) + ":" + keyEscaper.Replace(id)
}

func (s *redisSessions) Put(r *Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return s.putIndexed("put session", keySessions, r.ID, sessionKey(r.ID), b)
}

func (s *redisSessions) Get(id string) (*Record, error) {
	r := new(Record)
	if err := s.getJSON("get session", sessionKey(id), r); err != nil {
		return nil, err
	}
	return r, nil
}

func (s *redisSessions) Delete(id string) error {
	return s.deleteIndexed("delete session", keySessions, id, sessionKey(id))
}

func (s *redisSessions) List() ([]*Record, error) {
	var out []*Record
	_, err := s.listIndexed("list sessions", keySessions, sessionKey, func(id string, v []byte) error {
		r := new(Record)
		if err := json.Unmarshal(v, r); err != nil {
			return fmt.Errorf("session %q: %w", id, err)
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

func (s *redisSessions) PutTask(t *Task) error {
	b, err := json.Marshal(t)
	if err != nil {
		return err
	}
	return s.putIndexed("put task", keyTasks, t.ID, taskKey(t.ID), b)
}

func (s *redisSessions) GetTask(id string) (*Task, error) {
	t := new(Task)
	if err := s.getJSON("get task", taskKey(id), t); err != nil {
		return nil, err
	}
	return t, nil
}

func (s *redisSessions) DeleteTask(id string) error {
	return s.deleteIndexed("delete task", keyTasks, id, taskKey(id))
}

func (s *redisSessions) ListTasks() ([]*Task, error) {
	var out []*Task
	_, err := s.listIndexed("list tasks", keyTasks, taskKey, func(id string, v []byte) error {
		t := new(Task)
		if err := json.Unmarshal(v, t); err != nil {
			return fmt.Errorf("task %q: %w", id, err)
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

func (s *redisSessions) GetConversation(agent, id string) (*Conversation, error) {
	c := new(Conversation)
	if err := s.getJSON("get conversation", convKeyRedis(agent, id), c); err != nil {
		return nil, err
	}
	return c, nil
}

func (s *redisSessions) PutConversation(c *Conversation) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	ctx, cancel := opCtx()
	defer cancel()
	return s.wrap("put conversation", s.c.Set(ctx, convKeyRedis(c.Agent, c.ID), b, 0).Err())
}
